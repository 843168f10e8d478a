/// Reads fields of 0 to 64 bits from bytes, most significant bit first, as `BitWriter` wrote
/// them. Reading past the end throws `SeriesCodingError.truncated`; no input makes it trap.
///
/// Bits are taken from a 64-bit window refilled eight bytes at a time (one unaligned
/// big-endian load) while eight bytes remain, byte by byte near the end.
struct BitReader: Sendable {
    private let bytes: [UInt8]
    /// The next byte not yet loaded into the window.
    private var nextByte: Int
    /// The upcoming bits, the next one in the top bit. Only the top `windowBits` are counted;
    /// the bits below them are zero or the same upcoming bits loaded early, so loading them
    /// again with OR changes nothing.
    private var window: UInt64 = 0
    private var windowBits = 0

    /// A reader of `bytes` from byte `offset` on.
    init(_ bytes: [UInt8], fromByte offset: Int = 0) {
        self.bytes = bytes
        self.nextByte = min(max(offset, 0), bytes.count)
    }

    /// The bits not read yet.
    var remainingBits: Int { windowBits + 8 * (bytes.count - nextByte) }

    /// How many bits were read since the start of the bytes.
    var position: Int { 8 * nextByte - windowBits }

    /// The next `width` bits (0...64) as the low bits of the result.
    @inline(__always)
    mutating func read(_ width: Int) throws(SeriesCodingError) -> UInt64 {
        if width > 56 { return try readWide(width) }
        if windowBits < width {
            refill()
            guard windowBits >= width else { throw .truncated(atBit: 8 * bytes.count) }
        }
        // A shift by 64 (width 0) gives 0: `>>` on a non-constant amount is Swift's smart shift.
        let value = window >> UInt64(64 - width)
        window <<= UInt64(width)
        windowBits -= width
        return value
    }

    /// Whether the next `count` bits (at most 57) are in the window, refilling it if need be;
    /// only then may `window` be read and `skip(_:)` called for up to that many bits.
    @inline(__always)
    mutating func ensure(_ count: Int) -> Bool {
        if windowBits >= count { return true }
        refill()
        return windowBits >= count
    }

    /// The upcoming bits, the next one in the top bit; only as many as `ensure` vouched for
    /// are meaningful.
    var upcoming: UInt64 { window }

    /// Passes over `count` bits that `ensure` vouched for.
    @inline(__always)
    mutating func skip(_ count: Int) {
        window <<= UInt64(count)
        windowBits &-= count
    }

    /// The next bit.
    @inline(__always)
    mutating func readBit() throws(SeriesCodingError) -> Bool {
        try read(1) == 1
    }

    /// A truncated-unary prefix of at most `limit` ones (0...3): the number of 1 bits before a
    /// 0 bit, or `limit` after `limit` ones (no 0 bit follows then).
    @inline(__always)
    mutating func readUnary(limit: Int) throws(SeriesCodingError) -> Int {
        if windowBits < limit {
            refill()
            if windowBits < limit { return try readUnaryBitByBit(limit: limit) }
        }
        let ones = min((~window).leadingZeroBitCount, limit)
        let consumed = ones < limit ? ones + 1 : ones
        window <<= UInt64(consumed)
        windowBits -= consumed
        return ones
    }

    /// The number of 0 bits before the next 1 bit, which is passed over too: the quotient of
    /// a Rice code. A run longer than the window is counted window by window.
    @inline(__always)
    mutating func readZeroRun() throws(SeriesCodingError) -> Int {
        var zeros = 0
        while true {
            if windowBits == 0 {
                refill()
                guard windowBits > 0 else { throw .truncated(atBit: 8 * bytes.count) }
            }
            // The bits below the counted ones are zero or the same upcoming bits: a run
            // reaching into them is checked against `windowBits`.
            let run = window.leadingZeroBitCount
            if run < windowBits {
                window <<= UInt64(run &+ 1)
                windowBits &-= run &+ 1
                return zeros &+ run
            }
            zeros &+= windowBits
            (window, windowBits) = (0, 0)
        }
    }

    /// An unsigned LEB128 varint, as `BitWriter.writeVarint` writes it.
    mutating func readVarint() throws(SeriesCodingError) -> UInt64 {
        var value: UInt64 = 0
        for group in 0..<10 {
            let byte = try read(8)
            // The tenth group holds the top bit of 64; anything more overflows.
            guard group < 9 || byte <= 1 else { throw .corruptHeader(.overlongVarint) }
            value |= (byte & 0x7F) << UInt64(7 * group)
            if byte < 0x80 { return value }
        }
        throw .corruptHeader(.overlongVarint)
    }

    /// A zigzag-mapped signed varint, as `BitWriter.writeSignedVarint` writes it.
    mutating func readSignedVarint() throws(SeriesCodingError) -> Int64 {
        ZigZag.decode(try readVarint())
    }

    /// Throws `.countMismatch(declared:)` unless only the zero padding of the last byte is
    /// left: what a decoder checks after the last point.
    mutating func expectEnd(declaredCount: Int) throws(SeriesCodingError) {
        let rest = remainingBits
        guard rest < 8, try read(rest) == 0 else { throw .countMismatch(declared: declaredCount) }
    }

    private mutating func readWide(_ width: Int) throws(SeriesCodingError) -> UInt64 {
        let high = try read(width - 32)
        return high << 32 | (try read(32))
    }

    private mutating func readUnaryBitByBit(limit: Int) throws(SeriesCodingError) -> Int {
        var ones = 0
        while ones < limit, try readBit() { ones += 1 }
        return ones
    }

    /// Loads bytes until the window holds more than 56 bits or the bytes end.
    @inline(__always)
    private mutating func refill() {
        if nextByte <= bytes.count &- 8 {
            let word = bytes.withUnsafeBytes { UInt64(bigEndian: $0.loadUnaligned(fromByteOffset: nextByte, as: UInt64.self)) }
            window |= word >> UInt64(windowBits)
            let loaded = (63 - windowBits) >> 3
            nextByte += loaded
            windowBits += loaded << 3
            return
        }
        while windowBits <= 56, nextByte < bytes.count {
            window |= UInt64(bytes[nextByte]) << UInt64(56 - windowBits)
            nextByte += 1
            windowBits += 8
        }
    }
}
