/// Bounds-checked little-endian reading helpers over a byte array. Internal.
struct ByteReader: Sendable {
    let bytes: [UInt8]
    private(set) var offset: Int
    let end: Int

    init(_ bytes: [UInt8], offset: Int = 0) {
        self.bytes = bytes
        self.offset = min(max(offset, 0), bytes.count)
        self.end = bytes.count
    }

    /// Bytes left to read.
    var remaining: Int { end - offset }
    /// True when every byte has been consumed.
    var isAtEnd: Bool { offset >= end }

    /// Throws `.truncated(field, …)` unless `count` bytes are available.
    func require(_ count: Int, _ field: PMDField) throws(PMDDecodingError) {
        if count > remaining {
            throw .truncated(field, needed: count, available: remaining)
        }
    }

    /// Reads an unsigned little-endian integer of `count` (0...8) bytes.
    mutating func readUnsigned(_ count: Int, _ field: PMDField) throws(PMDDecodingError) -> UInt64 {
        try require(count, field)
        var value: UInt64 = 0
        for i in 0..<count {
            value |= UInt64(bytes[offset + i]) << (8 * UInt64(i))
        }
        offset += count
        return value
    }

    /// Reads a two's-complement little-endian integer of `count` (1...4) bytes, sign-extended.
    mutating func readSigned(_ count: Int, _ field: PMDField) throws(PMDDecodingError) -> Int32 {
        let raw = try readUnsigned(count, field)
        return signExtend(raw, bits: count * 8)
    }

    mutating func readUInt8(_ field: PMDField) throws(PMDDecodingError) -> UInt8 {
        UInt8(truncatingIfNeeded: try readUnsigned(1, field))
    }

    mutating func readBytes(_ count: Int, _ field: PMDField) throws(PMDDecodingError) -> [UInt8] {
        try require(count, field)
        let slice = Array(bytes[offset..<(offset + count)])
        offset += count
        return slice
    }

    mutating func skip(_ count: Int) {
        offset = min(offset + count, end)
    }
}

/// Sign-extends the low `bits` (1...32) bits of `raw` to an `Int32` (two's complement).
@inline(__always)
func signExtend(_ raw: UInt64, bits: Int) -> Int32 {
    precondition(bits >= 1 && bits <= 32)
    let masked = raw & ((UInt64(1) << UInt64(bits)) - 1)
    let shift = 64 - bits
    let extended = Int64(bitPattern: masked << UInt64(shift)) >> Int64(shift)
    return Int32(truncatingIfNeeded: extended)
}
