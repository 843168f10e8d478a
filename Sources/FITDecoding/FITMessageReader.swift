/// Walks the records of one FIT file's data section: takes in definition messages (either
/// byte order, developer fields measured so their bytes are skipped) and hands out data
/// messages, with times from their timestamp field or their compressed-timestamp header.
struct FITMessageReader {
    private let bytes: [UInt8]
    private let end: Int
    /// Where the next record starts.
    private var offset: Int
    /// Definitions by local message type (0–15).
    private var definitions = [FITDefinition?](repeating: nil, count: 16)
    /// The last full timestamp seen (or compressed one worked out), which compressed
    /// headers count on from; nil before any.
    private var lastTimestamp: UInt32?

    /// A reader of the records in `bytes[range]`.
    init(bytes: [UInt8], range: Range<Int>) {
        self.bytes = bytes
        self.offset = range.lowerBound
        self.end = min(range.upperBound, bytes.count)
    }

    /// The next data message, taking in the definitions before it; nil at the end of the
    /// data. After a throw (damage) the reader must not be used again.
    mutating func next() throws(FITError) -> FITMessage? {
        while offset < end {
            let recordStart = offset
            let header = bytes[offset]
            offset += 1
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

    /// The time a compressed header's 5-bit offset stands for: the first time at or after
    /// `last` whose low five bits are `offset` (so the offset rolls over every 32 s).
    static func expand(offset: UInt32, after last: UInt32) -> UInt32 {
        let rolledOver = offset < last & 0x1F
        return (last & ~0x1F) &+ offset &+ (rolledOver ? 0x20 : 0)
    }

    /// The next `count` bytes of the record being read.
    private mutating func take(_ count: Int) throws(FITError) -> ArraySlice<UInt8> {
        guard end - offset >= count else { throw .truncated(atOffset: end) }
        defer { offset += count }
        return bytes[offset..<offset + count]
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
        let content = try take(definition.contentSize)
        var message = FITMessage(
            definition: definition, bytes: bytes, contentStart: content.startIndex, timestamp: compressedTime)
        if compressedTime == nil, let time = message.value(FITProfile.timestampField, as: UInt32.self) {
            lastTimestamp = time
            message.timestamp = time
        }
        return message
    }
}
