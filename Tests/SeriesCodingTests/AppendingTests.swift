@testable import SeriesCoding
import TestSupport
import Testing

/// `encodedAppending()`: a chunk carried on batch by batch decodes as the one-shot chunk does,
/// chooses its codes anew only now and then, and stays about as small.
@Suite("Chunks carried on as they grow")
struct AppendingTests {
    @Test("every shape, grown in random batches: each chunk holds every point so far", arguments: TestSeries.Shape.allCases)
    func quantityBatches(shape: TestSeries.Shape) throws {
        var series = TestSeries(seed: 0xA9)
        let points = series.series(shape, count: 700)
        var encoder = QuantitySeriesEncoder()
        var index = 0
        while index < points.count {
            let batch = 1 + series.below(index < 20 ? 3 : 9)
            for point in points[index..<min(index + batch, points.count)] { encoder.append(time: point.time, value: point.value) }
            index = min(index + batch, points.count)
            let chunk = encoder.encodedAppending()
            #expect(sameBits(try QuantitySeriesReader.decode(chunk), Array(points[..<index])), "\(shape) at \(index)")
        }
    }

    @Test("beats with and without gaps, one at a time: each chunk holds every beat so far", arguments: [0, 0.005, 0.2, 1])
    func heartbeatsOneByOne(gapRate: Double) throws {
        var series = TestSeries(seed: 0xB9)
        let beats = series.beats(600, gapRate: gapRate)
        var encoder = HeartbeatSeriesEncoder()
        for (index, beat) in beats.enumerated() {
            encoder.append(beat)
            #expect(try HeartbeatSeriesReader.decode(encoder.encodedAppending()) == Array(beats[...index]))
        }
        #expect(encoder.encodedAppending().count <= encoder.encoded().count + encoder.encoded().count / 10 + 4)
    }

    @Test("a strap's points, one flush at a time: the codes are chosen some log₂ n times, the chunk within 3 % of the smallest",
          arguments: [TestSeries.Shape.strapMilliseconds, .strapMicroseconds, .fourHertz, .rrSeconds])
    func fewPlans(shape: TestSeries.Shape) throws {
        var series = TestSeries(seed: 0xC9)
        let points = series.series(shape, count: 512)
        var encoder = QuantitySeriesEncoder()
        var plans = 0
        for pair in stride(from: 0, to: points.count, by: 2) {
            for point in points[pair..<pair + 2] { encoder.append(time: point.time, value: point.value) }
            let before = encoder.plannedCount
            _ = encoder.encodedAppending()
            if encoder.plannedCount != before { plans += 1 }
        }
        // Doubling alone plans 9 times up to 512; a new widest residual or value adds a few.
        #expect(plans <= 24, "\(plans) plans")
        let carried = encoder.encodedAppending().count, smallest = encoder.encoded().count
        #expect(Double(carried) <= Double(smallest) * 1.03 + 4, "\(carried) bytes carried on, \(smallest) at best")
    }

    @Test("carrying on after removeAll, after resuming a stored chunk, and with encoded() between")
    func mixedUse() throws {
        var series = TestSeries(seed: 0xD9)
        let points = series.series(.fourHertz, count: 300)
        var encoder = QuantitySeriesEncoder()
        for point in points[..<100] { encoder.append(time: point.time, value: point.value) }
        _ = encoder.encodedAppending()
        encoder.removeAll()
        for point in points[100..<150] { encoder.append(time: point.time, value: point.value) }
        #expect(sameBits(try QuantitySeriesReader.decode(encoder.encodedAppending()), Array(points[100..<150])))
        var resumed = try QuantitySeriesEncoder(resuming: encoder.encoded())
        for point in points[150...] {
            resumed.append(time: point.time, value: point.value)
            #expect(resumed.encoded() == QuantitySeriesEncoder.oneShot(points[100...].prefix(resumed.count)))
            _ = resumed.encodedAppending()
        }
        #expect(sameBits(try QuantitySeriesReader.decode(resumed.encodedAppending()), Array(points[100...])))
        // A value the scale cannot hold, a time far off, one point then two.
        var odd = QuantitySeriesEncoder()
        let oddPoints = [QuantitySeriesPoint(time: 5, value: 60), QuantitySeriesPoint(time: 6, value: 61), QuantitySeriesPoint(time: 7, value: .pi),
                         QuantitySeriesPoint(time: .min, value: 62), QuantitySeriesPoint(time: 9, value: 62)]
        for (index, point) in oddPoints.enumerated() {
            odd.append(time: point.time, value: point.value)
            #expect(sameBits(try QuantitySeriesReader.decode(odd.encodedAppending()), Array(oddPoints[...index])))
        }
    }
}

extension QuantitySeriesEncoder {
    /// The chunk `encoded()` makes of `points`.
    static func oneShot(_ points: some Sequence<QuantitySeriesPoint>) -> [UInt8] {
        encode(Array(points))
    }
}
