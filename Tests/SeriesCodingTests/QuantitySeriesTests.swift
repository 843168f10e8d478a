@testable import SeriesCoding
import Testing

@Suite("Quantity series chunks")
struct QuantitySeriesTests {
    @Test("every shape, at every length up to 300, round-trips bit for bit", arguments: TestSeries.Shape.allCases)
    func roundTrip(shape: TestSeries.Shape) throws {
        var series = TestSeries(seed: 0x5E71E5)
        for count in Array(0...20) + (0..<40).map({ _ in series.below(300) }) {
            let points = series.series(shape, count: count)
            let chunk = encode(points)
            let decoded = try QuantitySeriesReader.decode(chunk)
            #expect(sameBits(decoded, points), "\(shape), \(count) points")
        }
    }

    @Test("the three ways to decode agree, and bulk decoding appends")
    func decodersAgree() throws {
        var series = TestSeries(seed: 1)
        for shape in TestSeries.Shape.allCases {
            let points = series.series(shape, count: 257)
            let chunk = encode(points)
            var times: [Int64] = [42], values: [Double] = [4.2]
            try QuantitySeriesReader.decode(chunk, appendingTimesTo: &times, values: &values)
            let appended = zip(times, values).map { QuantitySeriesPoint(time: $0, value: $1) }
            #expect(sameBits(appended, [QuantitySeriesPoint(time: 42, value: 4.2)] + points), "\(shape)")

            var reader = try QuantitySeriesReader(chunk)
            var stepped: [QuantitySeriesPoint] = []
            while let point = try reader.next() { stepped.append(point) }
            #expect(sameBits(stepped, points), "\(shape)")
            #expect(try reader.next() == nil)
            #expect(reader.count == points.count)
            #expect(reader.index == points.count)
        }
    }

    @Test("10 000 points in one chunk round-trip", arguments: [TestSeries.Shape.strapMicroseconds, .randomBits, .extremes])
    func longChunk(shape: TestSeries.Shape) throws {
        var series = TestSeries(seed: 10_000)
        let points = series.series(shape, count: 10_000)
        #expect(sameBits(try QuantitySeriesReader.decode(encode(points)), points))
    }

    @Test("an empty chunk is three bytes, and a one-point chunk holds its point")
    func emptyAndSingle() throws {
        #expect(QuantitySeriesEncoder().encoded() == [SeriesFormat.version, 0x51, 0])
        #expect(try QuantitySeriesReader.decode([1, 0x51, 0]).isEmpty)
        for value in TestSeries.extremeValues {
            for time in TestSeries.extremeTimes {
                let point = QuantitySeriesPoint(time: time, value: value)
                #expect(sameBits(try QuantitySeriesReader.decode(encode([point])), [point]), "\(time) \(value)")
            }
        }
    }

    @Test("Int64 times at and across the extremes round-trip, every pair and triple")
    func extremeTimes() throws {
        let times = TestSeries.extremeTimes
        for a in times {
            for b in times {
                for c in times {
                    let points = [a, b, c, a].map { QuantitySeriesPoint(time: $0, value: 1) }
                    #expect(try QuantitySeriesReader.decode(encode(points)) == points)
                }
            }
        }
    }

    @Test("appending batch by batch and resuming from the stored chunk gives the one-shot bytes")
    func incrementalEqualsOneShot() throws {
        var series = TestSeries(seed: 77)
        for shape in TestSeries.Shape.allCases {
            let points = series.series(shape, count: 600)
            var encoder = QuantitySeriesEncoder()
            var chunk = encoder.encoded()
            var next = 0
            while next < points.count {
                encoder = try QuantitySeriesEncoder(resuming: chunk)
                #expect(encoder.count == next)
                for point in points[next..<min(next + 1 + series.below(40), points.count)] {
                    encoder.append(time: point.time, value: point.value)
                    next += 1
                }
                chunk = encoder.encoded()
            }
            #expect(chunk == encode(points), "\(shape)")
            #expect(encoder.lastTime == points.last?.time)
            #expect(encoder.firstTime == points.first?.time)
        }
    }

    @Test("whole bpm, RR seconds and one-decimal values take scaled integers; others XOR")
    func valueModes() throws {
        var series = TestSeries(seed: 3)
        for shape in [TestSeries.Shape.strapMilliseconds, .strapMicroseconds, .fourHertz, .rrSeconds, .decimals, .hugeGaps] {
            #expect(try !isXOR(encode(series.series(shape, count: 100))), "\(shape)")
        }
        #expect(try isXOR(encode(series.series(.randomBits, count: 100))))
        #expect(try isXOR(encode([QuantitySeriesPoint(time: 0, value: 1), QuantitySeriesPoint(time: 1, value: -0.0)])))
        // Integers up to 2⁵³ scale, and take less room so when they change by little…
        #expect(ScaledIntegerPlan([-0x1p53, 0x1p53]) != nil)
        #expect(ScaledIntegerPlan([0x1p53 + 2]) == nil)
        #expect(try !isXOR(encode([QuantitySeriesPoint(time: 0, value: -0x1p53), QuantitySeriesPoint(time: 1, value: -0x1p53 + 1)])))
        // …but one alone is smaller as its 64 bits than as a 54-bit integer in a varint.
        #expect(try isXOR(encode([QuantitySeriesPoint(time: 0, value: -0x1p53)])))
    }

    @Test("the smallest exact scale is chosen", arguments: [
        ([72, 73, 71], 1), ([72.5, 73, 0.25], 4), ([0.1, 72, 36.6], 10), ([0.001, 0.872], 1000),
        ([871.0 / 1024, 0.5], 1024), ([0.01, 1], 100),
    ] as [([Double], UInt64)])
    func scales(values: [Double], scale: UInt64) throws {
        let plan = try #require(ScaledIntegerPlan(values))
        #expect(plan.scale.scale == scale)
        let points = values.enumerated().map { QuantitySeriesPoint(time: Int64($0.offset), value: $0.element) }
        #expect(sameBits(try QuantitySeriesReader.decode(encode(points)), points))
    }

    @Test("jittered arrivals take the grid; exact clock ticks the reference delta; steadily changing intervals the previous delta")
    func predictors() {
        var series = TestSeries(seed: 9)
        #expect(TickColumnPlan(series.arrivals(500, periodMs: 1000, tick: 1)).predictor == .grid)
        #expect(TickColumnPlan((0..<500).map { Int64($0) * 250_000 }).predictor == .referenceDelta)
        let accelerating = (0..<500).map { Int64($0 * $0 * 3) }
        #expect(TickColumnPlan(accelerating).predictor == .previousDelta)
        #expect(TickColumnPlan(accelerating).residuals.dropFirst().allSatisfy { $0 == ZigZag.encode(6) })
    }

    @Test("a strap's hour costs at most 4 bytes per sample in 60-point chunks, in ms and µs ticks",
          arguments: [TestSeries.Shape.strapMilliseconds, .strapMicroseconds, .fourHertz])
    func sizeGoal(shape: TestSeries.Shape) {
        var series = TestSeries(seed: 3600)
        let points = series.series(shape, count: 3600)
        let bytes = stride(from: 0, to: points.count, by: 60).reduce(0) { $0 + encode(Array(points[$1..<$1 + 60])).count }
        #expect(Double(bytes) / Double(points.count) <= 4, "\(bytes) bytes")
    }
}
