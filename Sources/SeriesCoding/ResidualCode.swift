/// A prefix code for zigzag-mapped residuals (small magnitudes of either sign as small
/// unsigned numbers), chosen per chunk: 1 to 4 buckets of strictly increasing bit widths. A
/// residual goes in the first bucket wide enough for it, written as the bucket's truncated-unary
/// prefix and then the residual in the bucket's width:
///
///     buckets   prefixes
///     1         (none)
///     2         0, 1
///     3         0, 10, 11
///     4         0, 10, 110, 111
///
/// Gorilla fixes its buckets (0, 7, 9, 12 and 32 bits for second ticks; Prometheus widens
/// them for milliseconds). Here the encoder measures the residuals of each chunk and picks the
/// widths that make it smallest (`cheapest(for:)`), so one code serves millisecond and
/// microsecond ticks, steady and jittery arrivals, whole and scaled values alike; the table
/// costs 2 + 7 bits per bucket in the header.
struct ResidualCode: Hashable, Sendable {
    static let maximumBucketCount = 4

    /// How many buckets (1...4).
    let bucketCount: Int
    /// Bucket widths, 8 bits each, bucket 0 in the low byte.
    private let packedWidths: UInt32

    /// One bucket of one bit: the narrowest code a tick column may use.
    static let oneBit = ResidualCode(bucketCount: 1, packedWidths: 1)

    private init(bucketCount: Int, packedWidths: UInt32) {
        self.bucketCount = bucketCount
        self.packedWidths = packedWidths
    }

    /// A code with these bucket widths; nil unless there are 1 to 4, strictly increasing,
    /// within 0...64.
    init?(widths: [Int]) {
        guard (1...Self.maximumBucketCount).contains(widths.count), widths.allSatisfy({ (0...64).contains($0) }),
            zip(widths, widths.dropFirst()).allSatisfy({ $0 < $1 })
        else { return nil }
        bucketCount = widths.count
        packedWidths = widths.reversed().reduce(0) { $0 << 8 | UInt32($1) }
    }

    /// The bucket widths, narrowest first.
    var widths: [Int] { (0..<bucketCount).map(width(ofBucket:)) }

    /// The widest residual this code holds, in bits.
    var widestBucket: Int { width(ofBucket: bucketCount - 1) }

    @inline(__always)
    private func width(ofBucket bucket: Int) -> Int {
        Int(truncatingIfNeeded: packedWidths >> UInt32(truncatingIfNeeded: bucket &* 8)) & 0xFF
    }

    /// The bits a residual of `length` significant bits costs, prefix included; nil when no
    /// bucket is wide enough.
    func bitCount(forLength length: Int) -> Int? {
        for bucket in 0..<bucketCount where width(ofBucket: bucket) >= length {
            return prefixLength(ofBucket: bucket) + width(ofBucket: bucket)
        }
        return nil
    }

    private func prefixLength(ofBucket bucket: Int) -> Int {
        bucket < bucketCount - 1 ? bucket + 1 : bucket
    }

    /// Whether the widest bucket holds `residual`.
    func holds(_ residual: UInt64) -> Bool {
        BitLengthHistogram.length(of: residual) <= widestBucket
    }

    /// Writes a zigzag-mapped residual; it must fit the widest bucket.
    func write(_ residual: UInt64, to writer: inout BitWriter) {
        let length = BitLengthHistogram.length(of: residual)
        guard let bucket = (0..<bucketCount).first(where: { width(ofBucket: $0) >= length }) else {
            preconditionFailure("a residual of \(length) bits is wider than the code built for its chunk")
        }
        // Bucket b < last: b ones and a zero; the last bucket: ones only.
        let prefixLength = prefixLength(ofBucket: bucket)
        let ones = (UInt64(1) << UInt64(bucket)) - 1
        writer.write(bucket < bucketCount - 1 ? ones << 1 : ones, width: prefixLength)
        writer.write(residual, width: width(ofBucket: bucket))
    }

    /// Reads one zigzag-mapped residual. When the longest prefix and widest bucket fit in the
    /// reader's window (up to 57 bits), one check covers both.
    @inline(__always)
    func read(from reader: inout BitReader) throws(SeriesCodingError) -> UInt64 {
        if reader.ensure(longestCodeBits) {
            let upcoming = reader.upcoming
            let bucket = min((~upcoming).leadingZeroBitCount, bucketCount &- 1)
            let prefixLength = bucket < bucketCount &- 1 ? bucket &+ 1 : bucket
            let width = width(ofBucket: bucket)
            reader.skip(prefixLength &+ width)
            // A shift by 64 (width 0) gives 0: `>>` on a non-constant amount is Swift's smart shift.
            return (upcoming << UInt64(prefixLength)) >> UInt64(64 &- width)
        }
        let bucket = try reader.readUnary(limit: bucketCount &- 1)
        return try reader.read(width(ofBucket: bucket))
    }

    /// The most bits one residual takes: the last bucket's prefix and width.
    private var longestCodeBits: Int { (bucketCount &- 1) &+ widestBucket }

    /// Writes the table: the bucket count less one in 2 bits, then each width in 7 bits.
    func writeTable(to writer: inout BitWriter) {
        writer.write(UInt64(bucketCount - 1), width: 2)
        for width in widths { writer.write(UInt64(width), width: 7) }
    }

    /// Reads a table `writeTable` wrote. With `spendingBits`, a code that writes residuals in
    /// no bits at all (one bucket of width 0) is corrupt: tick codes must cost a bit per point,
    /// so that a chunk's length bounds the points it can declare.
    static func readTable(from reader: inout BitReader, spendingBits: Bool) throws(SeriesCodingError) -> ResidualCode {
        let count = Int(try reader.read(2)) + 1
        var packedWidths: UInt32 = 0, previous = -1
        for bucket in 0..<count {
            let width = Int(try reader.read(7))
            guard width > previous, width <= 64 else { throw .corruptHeader(.residualCode) }
            packedWidths |= UInt32(width) << UInt32(8 * bucket)
            previous = width
        }
        guard !spendingBits || previous > 0 else { throw .corruptHeader(.residualCode) }
        return ResidualCode(bucketCount: count, packedWidths: packedWidths)
    }

    /// The code that writes the residuals counted in `histogram` in the fewest bits, table
    /// not counted, and that number of bits. With `spendingBits` it spends at least one bit
    /// per residual (see `readTable`).
    ///
    /// The last bucket is exactly as wide as the longest residual. Below it, a dynamic
    /// programme over widths finds the cheapest narrower buckets: `cost[b][w]` is the fewest
    /// bits for the residuals of at most `w` bits using buckets 0...b with bucket b of width w
    /// (each such bucket has a prefix of b + 1 bits). About 3 × 64² steps.
    static func cheapest(for histogram: BitLengthHistogram, spendingBits: Bool) -> (code: ResidualCode, bits: Int) {
        let longest = histogram.longest
        let shorterThan = histogram.cumulativeCounts
        func count(in lengths: ClosedRange<Int>) -> Int { shorterThan[lengths.upperBound + 1] - shorterThan[lengths.lowerBound] }
        let single = max(longest, spendingBits ? 1 : 0)
        var best = (widths: [single], bits: histogram.total * single)
        if longest >= 1 {
            // Buckets below the last have widths 0 ..< longest, strictly increasing.
            let innerLevels = min(maximumBucketCount - 1, longest)
            var cost = [[Int]](repeating: [Int](repeating: .max, count: longest), count: innerLevels)
            var narrower = [[Int]](repeating: [Int](repeating: 0, count: longest), count: innerLevels)
            for width in 0..<longest { cost[0][width] = count(in: 0...width) * (1 + width) }
            for level in 1..<innerLevels {
                for width in level..<longest {
                    for below in (level - 1)..<width where cost[level - 1][below] != .max {
                        let bits = cost[level - 1][below] + count(in: (below + 1)...width) * (level + 1 + width)
                        if bits < cost[level][width] { (cost[level][width], narrower[level][width]) = (bits, below) }
                    }
                }
            }
            // Close with the last bucket (width `longest`, prefix as long as the buckets below it).
            for level in 0..<innerLevels {
                for below in level..<longest where cost[level][below] != .max {
                    let bits = cost[level][below] + count(in: (below + 1)...longest) * (level + 1 + longest)
                    guard bits < best.bits else { continue }
                    var widths = [longest, below]
                    var (current, width) = (level, below)
                    while current > 0 { (current, width) = (current - 1, narrower[current][width]); widths.append(width) }
                    best = (widths.reversed(), bits)
                }
            }
        }
        guard let code = ResidualCode(widths: best.widths) else { preconditionFailure("widths \(best.widths) are not a code") }
        return (code, best.bits)
    }
}

/// How many residuals need each number of significant bits (0 for a zero residual, up to 64).
struct BitLengthHistogram: Sendable {
    private var atLength = [Int](repeating: 0, count: 65)

    /// The number of significant bits of `value`.
    @inline(__always)
    static func length(of value: UInt64) -> Int { 64 - value.leadingZeroBitCount }

    mutating func add(_ residual: UInt64) {
        atLength[Self.length(of: residual)] += 1
    }

    var total: Int { atLength.reduce(0, +) }

    /// The most significant bits any residual needs (0 when there are none).
    var longest: Int { atLength.lastIndex(where: { $0 > 0 }) ?? 0 }

    /// Element `n` (0...65) counts the residuals shorter than `n` bits.
    var cumulativeCounts: [Int] {
        atLength.reduce(into: [0]) { $0.append($0[$0.count - 1] + $1) }
    }
}
