/// One decoded data message: its global number and its fields' raw values (invalid values
/// already dropped), by field number.
struct FITMessage {
    var global: UInt16
    var fields: [UInt8: [UInt64]]
    /// The message's timestamp (field 253, or from a compressed-timestamp header).
    var timestamp: UInt32?

    func value(_ field: UInt8) -> UInt64? { fields[field]?.first }
}

/// Walks the records of a FIT file: definitions (either byte order, developer fields
/// skipped), data messages, and compressed-timestamp headers.
struct FITRecordReader {
    private struct FieldDefinition {
        var number: UInt8
        var size: Int
        var baseType: UInt8
    }

    private struct Definition {
        var global: UInt16
        var bigEndian: Bool
        var fields: [FieldDefinition]
        var developerBytes: Int
    }

    private let bytes: [UInt8]
    private let end: Int
    private(set) var offset: Int
    private var definitions: [Int: Definition] = [:]
    private var lastTimestamp: UInt32 = 0

    init(bytes: [UInt8], start: Int, end: Int) {
        self.bytes = bytes
        self.offset = start
        self.end = end
    }

    var atEnd: Bool { offset >= end }

    /// The next data message (definitions are taken in on the way); nil at the end.
    mutating func next() throws(FITError) -> FITMessage? {
        while offset < end {
            let recordStart = offset
            let header = bytes[offset]
            offset += 1
            if header & 0x80 != 0 {
                // Compressed timestamp header: a data message with a 5-bit time offset.
                let local = Int((header >> 5) & 0x03)
                let timeOffset = UInt32(header & 0x1F)
                lastTimestamp = lastTimestamp &+ ((timeOffset &- (lastTimestamp & 0x1F)) & 0x1F)
                var message = try readData(local: local, at: recordStart)
                message.timestamp = lastTimestamp
                return message
            }
            let local = Int(header & 0x0F)
            if header & 0x40 != 0 {
                try readDefinition(local: local, developer: header & 0x20 != 0, at: recordStart)
                continue
            }
            var message = try readData(local: local, at: recordStart)
            if let timestamp = message.value(253) {
                lastTimestamp = UInt32(truncatingIfNeeded: timestamp)
                message.timestamp = lastTimestamp
            }
            return message
        }
        return nil
    }

    private mutating func take(_ count: Int, at recordStart: Int) throws(FITError) -> ArraySlice<UInt8> {
        guard count >= 0, offset + count <= end else { throw .truncated(atOffset: recordStart) }
        defer { offset += count }
        return bytes[offset..<offset + count]
    }

    private mutating func readDefinition(local: Int, developer: Bool, at recordStart: Int) throws(FITError) {
        let fixed = try take(5, at: recordStart)
        let bigEndian = fixed[fixed.startIndex + 1] == 1
        let low = UInt16(fixed[fixed.startIndex + 2]), high = UInt16(fixed[fixed.startIndex + 3])
        let global = bigEndian ? low << 8 | high : high << 8 | low
        let count = Int(fixed[fixed.startIndex + 4])
        let raw = try take(count * 3, at: recordStart)
        var fields: [FieldDefinition] = []
        for index in 0..<count {
            let base = raw.startIndex + index * 3
            let field = FieldDefinition(number: raw[base], size: Int(raw[base + 1]), baseType: raw[base + 2])
            guard field.size > 0 else { throw .malformedDefinition(atOffset: recordStart) }
            fields.append(field)
        }
        var developerBytes = 0
        if developer {
            let developerCount = Int(try take(1, at: recordStart).first!)
            let developerFields = try take(developerCount * 3, at: recordStart)
            for index in 0..<developerCount { developerBytes += Int(developerFields[developerFields.startIndex + index * 3 + 1]) }
        }
        definitions[local] = Definition(global: global, bigEndian: bigEndian, fields: fields, developerBytes: developerBytes)
    }

    private mutating func readData(local: Int, at recordStart: Int) throws(FITError) -> FITMessage {
        guard let definition = definitions[local] else { throw .undefinedLocalMessage(local, atOffset: recordStart) }
        var message = FITMessage(global: definition.global, fields: [:])
        for field in definition.fields {
            let raw = try take(field.size, at: recordStart)
            let values = FITBaseType(field.baseType).values(in: raw, bigEndian: definition.bigEndian)
            if !values.isEmpty { message.fields[field.number] = values }
        }
        _ = try take(definition.developerBytes, at: recordStart)
        return message
    }
}

/// A FIT base type: its element size and its "invalid" value.
struct FITBaseType {
    let size: Int
    let invalid: UInt64?
    let isNumber: Bool

    init(_ code: UInt8) {
        switch code & 0x1F {
        case 0x00: (size, invalid, isNumber) = (1, 0xFF, true)  // enum
        case 0x01: (size, invalid, isNumber) = (1, 0x7F, true)  // sint8
        case 0x02: (size, invalid, isNumber) = (1, 0xFF, true)  // uint8
        case 0x03: (size, invalid, isNumber) = (2, 0x7FFF, true)  // sint16
        case 0x04: (size, invalid, isNumber) = (2, 0xFFFF, true)  // uint16
        case 0x05: (size, invalid, isNumber) = (4, 0x7FFF_FFFF, true)  // sint32
        case 0x06: (size, invalid, isNumber) = (4, 0xFFFF_FFFF, true)  // uint32
        case 0x0A: (size, invalid, isNumber) = (1, 0x00, true)  // uint8z
        case 0x0B: (size, invalid, isNumber) = (2, 0x0000, true)  // uint16z
        case 0x0C: (size, invalid, isNumber) = (4, 0x0000_0000, true)  // uint32z
        case 0x0D: (size, invalid, isNumber) = (1, 0xFF, true)  // byte
        case 0x0E: (size, invalid, isNumber) = (8, 0x7FFF_FFFF_FFFF_FFFF, true)  // sint64
        case 0x0F: (size, invalid, isNumber) = (8, 0xFFFF_FFFF_FFFF_FFFF, true)  // uint64
        case 0x10: (size, invalid, isNumber) = (8, 0, true)  // uint64z
        default: (size, invalid, isNumber) = (1, nil, false)  // string, floats: not read here
        }
    }

    /// The valid elements of a field's bytes (an array when the field holds several).
    func values(in raw: ArraySlice<UInt8>, bigEndian: Bool) -> [UInt64] {
        guard isNumber, raw.count % size == 0 else { return [] }
        var values: [UInt64] = []
        var index = raw.startIndex
        while index < raw.endIndex {
            var value: UInt64 = 0
            for byte in 0..<size {
                let shift = bigEndian ? (size - 1 - byte) * 8 : byte * 8
                value |= UInt64(raw[index + byte]) << UInt64(shift)
            }
            if value != invalid { values.append(value) }
            index += size
        }
        return values
    }
}
