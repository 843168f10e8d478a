/// Writes fields of 0 to 64 bits into bytes, most significant bit first; the last byte is
/// padded with zero bits.
struct BitWriter: Sendable {
    /// The whole bytes written so far (the bits of a partly filled last byte are not in it yet).
    private(set) var bytes: [UInt8]
    /// The last `pendingBits` bits of `accumulator` are written but not yet in `bytes`
    /// (fewer than 8 between calls); its higher bits are stale and never read.
    private var accumulator: UInt64 = 0
    private var pendingBits = 0

    /// A writer that starts with `prefix`, room reserved for `capacity` bytes in all.
    init(prefix: [UInt8] = [], capacity: Int = 0) {
        bytes = prefix
        bytes.reserveCapacity(max(capacity, prefix.count))
    }

    /// How many bits were written, padding not counted.
    var bitCount: Int { bytes.count * 8 + pendingBits }

    /// Writes the low `width` bits of `value` (0...64), most significant first. Higher bits of
    /// `value` are ignored.
    mutating func write(_ value: UInt64, width: Int) {
        precondition((0...64).contains(width), "a bit field is 0 to 64 bits wide")
        if width > 32 {
            write(value >> 32, width: width - 32)
            write(value & 0xFFFF_FFFF, width: 32)
            return
        }
        // pendingBits < 8 and width ≤ 32: the accumulator never loses a pending bit.
        accumulator = accumulator << UInt64(width) | (value & Self.mask(width))
        pendingBits += width
        while pendingBits >= 8 {
            pendingBits -= 8
            bytes.append(UInt8(truncatingIfNeeded: accumulator >> UInt64(pendingBits)))
        }
    }

    /// Writes one bit.
    mutating func write(_ bit: Bool) {
        write(bit ? 1 : 0, width: 1)
    }

    /// Writes `value` as a LEB128 unsigned varint: groups of 7 bits, least significant first,
    /// each in 8 bits whose top bit says another group follows (1 to 10 groups).
    mutating func writeVarint(_ value: UInt64) {
        var rest = value
        while rest >= 0x80 {
            write(rest & 0x7F | 0x80, width: 8)
            rest >>= 7
        }
        write(rest, width: 8)
    }

    /// Writes `value` zigzag-mapped (0, −1, 1, −2, … → 0, 1, 2, 3, …) as an unsigned varint.
    mutating func writeSignedVarint(_ value: Int64) {
        writeVarint(ZigZag.encode(value))
    }

    /// The bytes, the last one padded with zero bits.
    func finished() -> [UInt8] {
        guard pendingBits > 0 else { return bytes }
        var result = bytes
        result.append(UInt8(truncatingIfNeeded: accumulator << UInt64(8 - pendingBits)))
        return result
    }

    /// The bits written when a varint of `value` takes (8 per group of 7 bits).
    static func varintBitCount(_ value: UInt64) -> Int {
        8 * max(1, (64 - value.leadingZeroBitCount + 6) / 7)
    }

    /// A mask of the low `width` bits (0...64).
    static func mask(_ width: Int) -> UInt64 {
        width >= 64 ? .max : (1 << UInt64(width)) &- 1
    }
}

/// The zigzag mapping of signed integers onto unsigned ones, small magnitudes first:
/// 0, −1, 1, −2, 2, … ↔ 0, 1, 2, 3, 4, …
enum ZigZag {
    @inline(__always)
    static func encode(_ value: Int64) -> UInt64 {
        UInt64(bitPattern: (value << 1) ^ (value >> 63))
    }

    @inline(__always)
    static func decode(_ value: UInt64) -> Int64 {
        Int64(bitPattern: (value >> 1) ^ (0 &- (value & 1)))
    }
}
