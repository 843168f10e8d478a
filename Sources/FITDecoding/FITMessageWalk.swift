import ByteSources

/// The data messages of a FIT source read front to back: one file, or several chained one
/// after the other (as some devices write an activity followed by its settings). Takes in
/// definition messages (either byte order, developer fields measured so their bytes are
/// skipped) and hands out data messages, with times from their timestamp field or their
/// compressed-timestamp header. Each byte is read once, so a source that reads a file keeps
/// only a window of it; the file CRC is computed as the bytes go by.
///
/// The walk ends at the end of the source or at the first damage, which `damage` then holds:
/// messages before it have been handed out (all of them, for a CRC mismatch, which is only
/// known at the end).
struct FITMessageWalk {
    private var source: ByteSource
    /// The file being read.
    private var layout: FITFileLayout
    /// Where the next record starts.
    private var offset: Int
    /// Where the current file's records end: its data section, or the source, which ends first.
    private var end: Int
    /// The CRC of the current file's bytes so far.
    private var crc: UInt16
    /// Definitions by local message type (0–15).
    private var definitions = [FITDefinition?](repeating: nil, count: 16)
    /// The last full timestamp seen (or compressed one worked out), which compressed headers
    /// count on from; nil before any.
    private var lastTimestamp: UInt32?
    /// What stopped the walk early or made it suspect; nil while it goes on, and at its end
    /// when every file was whole with a matching CRC.
    private(set) var damage: FITError?
    private var ended = false

    /// Bytes of the source read so far.
    var bytesRead: Int { offset }

    /// A walk of `source`. Throws only when it does not start with a valid FIT header.
    init(_ source: ByteSource) throws(FITError) {
        var source = source
        let header = try FITFileHeader(from: &source, at: 0)
        self.source = source
        layout = FITFileLayout(start: 0, header: header)
        offset = 0
        end = 0
        crc = 0
        try begin(layout)
    }

    /// The next data message; nil at the end of the source or at damage.
    mutating func next() -> FITMessage? {
        guard !ended else { return nil }
        do {
            while true {
                if let message = try nextInFile() { return message }
                guard try closeFile() else { break }
            }
        } catch {
            damage = error
        }
        ended = true
        return nil
    }

    /// The time a compressed header's 5-bit offset stands for: the first time at or after
    /// `last` whose low five bits are `offset` (so the offset rolls over every 32 s).
    static func expand(offset: UInt32, after last: UInt32) -> UInt32 {
        let rolledOver = offset < last & 0x1F
        return (last & ~0x1F) &+ offset &+ (rolledOver ? 0x20 : 0)
    }

    /// Starts reading the file `layout` describes, its header already checked.
    private mutating func begin(_ layout: FITFileLayout) throws(FITError) {
        self.layout = layout
        offset = layout.data.lowerBound
        end = min(layout.data.upperBound, source.count)
        crc = FITCRC.checksum(try FITSourceRead.bytes(of: &source, at: layout.start, length: layout.header.size))
        definitions = [FITDefinition?](repeating: nil, count: 16)
        lastTimestamp = nil
    }

    /// Checks the file CRC after the records and opens the chained file that follows, if
    /// any: false when the source ends there.
    private mutating func closeFile() throws(FITError) -> Bool {
        let stored = try FITSourceRead.bytes(of: &source, at: layout.data.upperBound, length: 2)
        guard stored.count == 2 else { throw .truncated(atOffset: source.count) }
        let expected = LittleEndian.uint16(stored, at: stored.startIndex)
        guard expected == crc else { throw .fileCRCMismatch(expected: expected, actual: crc) }
        guard layout.end < source.count else { return false }
        let next: FITFileHeader
        do {
            next = try FITFileHeader(from: &source, at: layout.end)
        } catch .notAFITFile {
            throw .unexpectedTrailingBytes(atOffset: layout.end)
        }
        try begin(FITFileLayout(start: layout.end, header: next))
        return true
    }

    /// The next data message of the current file, taking in the definitions before it; nil
    /// at the end of its data.
    private mutating func nextInFile() throws(FITError) -> FITMessage? {
        while offset < end {
            let recordStart = offset
            let header = try take(1).first!
            if header & 0x80 != 0 {
                // Compressed timestamp header: local type in bits 5–6, seconds in bits 0–4.
                let time = lastTimestamp.map { Self.expand(offset: UInt32(header & 0x1F), after: $0) }
                lastTimestamp = time ?? lastTimestamp
                return try readData(local: Int((header >> 5) & 0x03), at: recordStart, compressedTime: time)
            }
            if header & 0x40 != 0 {
                try readDefinition(local: Int(header & 0x0F), developer: header & 0x20 != 0, at: recordStart)
                continue
            }
            return try readData(local: Int(header & 0x0F), at: recordStart, compressedTime: nil)
        }
        return nil
    }

    /// The next `count` bytes of the record being read, counted into the file CRC.
    private mutating func take(_ count: Int) throws(FITError) -> ArraySlice<UInt8> {
        guard end - offset >= count else { throw .truncated(atOffset: end) }
        let bytes = try FITSourceRead.bytes(of: &source, at: offset, length: count)
        guard bytes.count == count else { throw .truncated(atOffset: offset + bytes.count) }
        offset += count
        for byte in bytes { crc = FITCRC.update(crc, byte) }
        return bytes
    }

    private mutating func readDefinition(local: Int, developer: Bool, at recordStart: Int) throws(FITError) {
        let fixed = try take(5)  // reserved, architecture, global number (2), field count
        let architecture = fixed[fixed.startIndex + 1]
        guard architecture <= 1 else { throw .malformedDefinition(atOffset: recordStart) }
        let bigEndian = architecture == 1
        let first = UInt16(fixed[fixed.startIndex + 2]), second = UInt16(fixed[fixed.startIndex + 3])
        let global = bigEndian ? first << 8 | second : second << 8 | first
        let rawFields = try take(Int(fixed[fixed.startIndex + 4]) * 3)
        var fields: [FITDefinition.Field] = []
        fields.reserveCapacity(rawFields.count / 3)
        var size = 0
        for start in stride(from: rawFields.startIndex, to: rawFields.endIndex, by: 3) {
            let fieldSize = Int(rawFields[start + 1])
            let baseType = FITBaseType(code: rawFields[start + 2])
            fields.append(.init(number: rawFields[start], baseType: baseType, range: size..<size + fieldSize))
            size += fieldSize
        }
        if developer {
            // Developer fields: (field number, size, developer data index); only their size matters.
            let countByte = try take(1)
            let rawDeveloperFields = try take(Int(countByte[countByte.startIndex]) * 3)
            for start in stride(from: rawDeveloperFields.startIndex, to: rawDeveloperFields.endIndex, by: 3) {
                size += Int(rawDeveloperFields[start + 1])
            }
        }
        definitions[local] = FITDefinition(globalMessage: global, bigEndian: bigEndian, fields: fields, contentSize: size)
    }

    private mutating func readData(local: Int, at recordStart: Int, compressedTime: UInt32?) throws(FITError) -> FITMessage {
        guard let definition = definitions[local] else { throw .undefinedLocalMessage(local, atOffset: recordStart) }
        var message = FITMessage(definition: definition, content: try take(definition.contentSize), timestamp: compressedTime)
        if compressedTime == nil, let time = message.value(FITProfile.timestampField, as: UInt32.self) {
            lastTimestamp = time
            message.timestamp = time
        }
        return message
    }
}
