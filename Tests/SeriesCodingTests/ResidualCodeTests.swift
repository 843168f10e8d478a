@testable import SeriesCoding
import Testing

@Suite("Residual codes fitted per chunk")
struct ResidualCodeTests {
    @Test("the fitted code costs what brute force over every bucket layout finds, and what it writes")
    func cheapestIsOptimal() throws {
        var random = TestSeries(seed: 0xC0DE)
        for round in 0..<80 {
            // Residuals of a few typical magnitudes, as jitter and rare outliers give.
            let typical = random.below(12), rare = typical + random.below(9)
            let residuals = (0..<1 + random.below(400)).map { _ -> UInt64 in
                let bits = random.below(10) == 0 ? rare : typical
                return bits == 0 ? 0 : random.random.next() >> UInt64(64 - bits)
            }
            var histogram = BitLengthHistogram()
            for residual in residuals { histogram.add(residual) }
            let spendingBits = round % 2 == 0
            let (code, bits) = ResidualCode.cheapest(for: histogram, spendingBits: spendingBits)
            #expect(bits == Self.bruteForceMinimum(residuals, spendingBits: spendingBits), "round \(round)")

            var writer = BitWriter()
            for residual in residuals { code.write(residual, to: &writer) }
            #expect(writer.bitCount == bits)
            var reader = BitReader(writer.finished())
            for residual in residuals { #expect(try code.read(from: &reader) == residual) }
        }
    }

    @Test("codes at the edges: only zeros, 64-bit residuals, one bit at least for ticks")
    func edges() throws {
        var zeros = BitLengthHistogram()
        for _ in 0..<10 { zeros.add(0) }
        #expect(ResidualCode.cheapest(for: zeros, spendingBits: false).code.widths == [0])
        #expect(ResidualCode.cheapest(for: zeros, spendingBits: false).bits == 0)
        #expect(ResidualCode.cheapest(for: zeros, spendingBits: true).code.widths == [1])

        var wide = BitLengthHistogram()
        for value: UInt64 in [.max, 0, 1, 1, 1, 1, 1] { wide.add(value) }
        let code = ResidualCode.cheapest(for: wide, spendingBits: true).code
        #expect(code.widestBucket == 64)
        var writer = BitWriter()
        for value: UInt64 in [.max, 0, 1, .max - 1] { code.write(value, to: &writer) }
        var reader = BitReader(writer.finished())
        for value: UInt64 in [.max, 0, 1, .max - 1] { #expect(try code.read(from: &reader) == value) }
    }

    @Test("tables round-trip; tables no encoder writes are refused")
    func tables() throws {
        for widths in [[0], [1], [64], [0, 64], [3, 7, 9, 12], [0, 1, 2]] {
            let code = try #require(ResidualCode(widths: widths))
            var writer = BitWriter()
            code.writeTable(to: &writer)
            #expect(writer.bitCount == 2 + 7 * widths.count)
            var reader = BitReader(writer.finished())
            #expect(try ResidualCode.readTable(from: &reader, spendingBits: widths != [0]) == code)
        }
        for widths in [[], [65], [3, 3], [5, 4], [1, 2, 3, 4, 5]] { #expect(ResidualCode(widths: widths) == nil) }
    }

    /// The fewest bits any code of 1 to 4 buckets (strictly increasing widths, the widest at
    /// least the longest residual) spends on `residuals`.
    static func bruteForceMinimum(_ residuals: [UInt64], spendingBits: Bool) -> Int {
        let lengths = Dictionary(residuals.map { (BitLengthHistogram.length(of: $0), 1) }, uniquingKeysWith: +)
        let longest = lengths.keys.max() ?? 0
        var best = Int.max
        func consider(_ widths: [Int]) {
            guard let code = ResidualCode(widths: widths), !(spendingBits && widths == [0]) else { return }
            var total = 0
            for (length, count) in lengths {
                guard let bits = code.bitCount(forLength: length) else { return }
                total += bits * count
            }
            best = min(best, total)
        }
        let range = 0...min(longest + 1, 64)
        for a in range {
            consider([a])
            for b in range where b > a {
                consider([a, b])
                for c in range where c > b {
                    consider([a, b, c])
                    for d in range where d > c { consider([a, b, c, d]) }
                }
            }
        }
        return best
    }
}
