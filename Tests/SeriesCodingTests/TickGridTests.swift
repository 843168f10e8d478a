@testable import SeriesCoding
import TestSupport
import Testing

/// The grid time predictor of format version 2: its arithmetic at the edges of `Int64`, and
/// chunks that choose it round-trip whatever the times do.
@Suite("Time grid predictor")
struct TickGridTests {
    @Test("a value's offset from the nearest multiple of the period, halves toward zero, at the edges of Int64")
    func offsets() {
        #expect(TickGrid.offset(of: 7, period: 10) == -3)
        #expect(TickGrid.offset(of: 5, period: 10) == 5)
        #expect(TickGrid.offset(of: -5, period: 10) == -5)
        #expect(TickGrid.offset(of: -7, period: 10) == 3)
        #expect(TickGrid.offset(of: 14, period: 10) == 4)
        #expect(TickGrid.offset(of: .min, period: 1) == 0)
        #expect(TickGrid.offset(of: .max, period: .max) == 0)
        #expect(TickGrid.offset(of: .min, period: .max) == -1)
        var random = SplitMix64(seed: 77)
        let periods: [Int64] = [1, 2, 3, 250_000, 1 << 62, .max - 1, .max]
        for _ in 0..<20_000 {
            let value = Int64(bitPattern: random.next())
            let period = random.next() % 2 == 0 ? periods[Int(random.next() % UInt64(periods.count))] : Int64(random.next() >> 1) | 1
            let offset = TickGrid.offset(of: value, period: period)
            // value − offset is a multiple of the period, and the nearest one.
            #expect((Int128(value) - Int128(offset)) % Int128(period) == 0)
            #expect(Int128(offset.magnitude) * 2 <= Int128(period))
        }
    }

    @Test("grid residuals and the times they come from agree for any period, phase and times, wrapping and never trapping")
    func arithmeticWraps() {
        var random = SplitMix64(seed: 78)
        for _ in 0..<2_000 {
            let period = [1, 3, Int64.max, Int64(random.next() >> 1) | 1][Int(random.next() % 4)]
            let times = (0..<20).map { _ in random.next() % 3 == 0 ? TestSeries.extremeTimes[Int(random.next() % 7)] : Int64(bitPattern: random.next()) }
            let phase = Int64(bitPattern: random.next())
            var writing = TickGrid(period: period, first: times[0], phase: phase)
            var reading = writing
            for time in times.dropFirst() {
                let residual = time &- writing.prediction
                writing.advance(to: time, residual: residual)
                let read = reading.prediction &+ residual
                reading.advance(to: read, residual: residual)
                #expect(read == time)
            }
        }
    }

    /// Arrivals every `period` ticks, each off by up to `jitter` either way, one in `lostEvery`
    /// lost, the clock running `drift` parts in a million fast or slow.
    private static func arrivals(_ count: Int, period: Double, jitter: Double, lostEvery: UInt64, drift: Double, start: Int64,
                                 _ random: inout SplitMix64) -> [Int64] {
        var index = 0.0
        return (0..<count).map { _ in
            index += random.next() % lostEvery == 0 ? 2 : 1
            let offset = index * period * (1 + drift / 1e6) + (Double(random.next() >> 11) * 0x1p-53 * 2 - 1) * jitter
            return start &+ Int64(offset.rounded(.down))
        }
    }

    @Test("jittered arrivals with lost points and drift round-trip and take the grid, in every tick and around the extremes",
          arguments: [(250_000.0, 30_000.0), (1000, 30), (1_000_000, 450_000), (4, 1), (3e15, 1e14)])
    func jitteredArrivals(period: Double, jitter: Double) throws {
        var random = SplitMix64(seed: UInt64(period))
        for start: Int64 in [1_767_225_600_000_000, -5_000_000_000, .max - Int64(period * 200), .min] {
            for drift in [-40.0, 0, 25] {
                let times = Self.arrivals(Int.random(in: 2...300, using: &random), period: period, jitter: jitter, lostEvery: 40,
                                          drift: drift, start: start, &random)
                let points = times.map { QuantitySeriesPoint(time: $0, value: 72) }
                #expect(sameBits(try QuantitySeriesReader.decode(encode(points)), points))
                // (Jitter of nearly half a period hides which period a point belongs to, and
                // a short chunk may not repay the grid's phase: the grid is tried, and may lose.)
                if times.count > 150, jitter > 1, jitter <= period / 4 {
                    #expect(TickColumnPlan(times).predictor == .grid, "start \(start), drift \(drift)")
                }
            }
        }
    }

    @Test("for clocked arrivals the grid saves a bit per point or more over the reference delta")
    func gridSaves() {
        var random = SplitMix64(seed: 79)
        let times = Self.arrivals(300, period: 250_000, jitter: 30_000, lostEvery: 500, drift: 20, start: 1_767_225_600_000_000, &random)
        let grid = TickColumnPlan(times)
        let deltas = zip(times, times.dropFirst()).map { $1 - $0 }
        let median = deltas.sorted()[deltas.count / 2]
        var histogram = BitLengthHistogram()
        for delta in deltas { histogram.add(ZigZag.encode(delta - median)) }
        let reference = ResidualCode.cheapest(for: histogram, spendingBits: true).bits
        var gridHistogram = BitLengthHistogram()
        for residual in grid.residuals { gridHistogram.add(residual) }
        #expect(grid.predictor == .grid)
        #expect(ResidualCode.cheapest(for: gridHistogram, spendingBits: true).bits + deltas.count <= reference)
    }

    @Test("equal, backward, one and two times, and times anywhere, round-trip whichever predictor they take")
    func adversarialTimes() throws {
        var random = SplitMix64(seed: 80)
        let cases: [[Int64]] = [
            [5], [5, 5], [5, 4], [.min, .max], [.max, .min], Array(repeating: 9, count: 40),
            (0..<100).map { 1000 - Int64($0) * 7 }, (0..<100).map { Int64($0 / 3) * 250 },
            (0..<100).map { _ in Int64(bitPattern: random.next()) },
            (0..<100).map { _ in TestSeries.extremeTimes[Int(random.next() % 7)] },
            (0..<100).map { Int64($0) &* (Int64.max / 64) },
            (0..<100).map { $0 % 10 == 9 ? Int64($0) * 250 + 86_400_000 : Int64($0) * 250 },
        ]
        for times in cases {
            let points = times.map { QuantitySeriesPoint(time: $0, value: 1) }
            #expect(sameBits(try QuantitySeriesReader.decode(encode(points)), points), "\(times.prefix(4))")
            let beats = times.map { Heartbeat(offset: $0) }
            #expect(try HeartbeatSeriesReader.decode(encode(beats)) == beats)
        }
    }
}
