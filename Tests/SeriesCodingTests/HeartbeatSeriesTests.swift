@testable import SeriesCoding
import Testing

@Suite("Heartbeat series chunks")
struct HeartbeatSeriesTests {
    @Test("beats with no, rare, frequent and only gaps round-trip", arguments: [0, 0.005, 0.1, 0.5, 1])
    func roundTrip(gapRate: Double) throws {
        var series = TestSeries(seed: 0xBEA7)
        for count in Array(0...12) + (0..<30).map({ _ in series.below(1100) }) {
            let beats = series.beats(count, gapRate: gapRate)
            #expect(try HeartbeatSeriesReader.decode(encode(beats)) == beats, "\(count) beats")
        }
    }

    @Test("a gap on the first beat, on the last, and on both")
    func gapsAtTheEnds() throws {
        for gaps in [[0], [9], [0, 9], [0, 1, 2], Array(0..<10)] {
            let beats = (0..<10).map { Heartbeat(offset: Int64($0) * 800, precededByGap: gaps.contains($0)) }
            #expect(try HeartbeatSeriesReader.decode(encode(beats)) == beats, "gaps \(gaps)")
        }
        let single = [Heartbeat(offset: 5, precededByGap: true)]
        #expect(try HeartbeatSeriesReader.decode(encode(single)) == single)
    }

    @Test("offsets anywhere in Int64 round-trip")
    func extremeOffsets() throws {
        let beats = TestSeries.extremeTimes.flatMap { a in TestSeries.extremeTimes.map { [a, $0] } }.flatMap { $0 }
            .enumerated().map { Heartbeat(offset: $0.element, precededByGap: $0.offset % 3 == 0) }
        #expect(try HeartbeatSeriesReader.decode(encode(beats)) == beats)
    }

    @Test("rare gaps go in a list, frequent ones as a flag per beat, whichever is smaller")
    func gapEncodingIsTheSmaller() throws {
        var series = TestSeries(seed: 5)
        let beats = series.beats(256, gapRate: 0)
        let noGaps = encode(beats)
        var oneGap = beats
        oneGap[100].precededByGap = true
        // The list of one gap: its count and index, two bytes.
        #expect(encode(oneGap).count - noGaps.count <= 2)
        let allGaps = beats.map { Heartbeat(offset: $0.offset, precededByGap: true) }
        // A flag per beat: 256 bits.
        #expect(encode(allGaps).count - noGaps.count <= 256 / 8 + 1)
    }

    @Test("RR intervals at 1/1024 s cost under 2 bytes per beat")
    func size() {
        var series = TestSeries(seed: 1024)
        let beats = series.beats(1024, gapRate: 0.005)
        #expect(encode(beats).count < 2 * beats.count, "\(encode(beats).count) bytes")
    }

    @Test("appending batch by batch and resuming from the stored chunk gives the one-shot bytes")
    func incrementalEqualsOneShot() throws {
        var series = TestSeries(seed: 88)
        for gapRate in [0, 0.02, 0.7] {
            let beats = series.beats(500, gapRate: gapRate)
            var chunk = HeartbeatSeriesEncoder().encoded()
            var next = 0
            while next < beats.count {
                var encoder = try HeartbeatSeriesEncoder(resuming: chunk)
                #expect(encoder.count == next)
                for beat in beats[next..<min(next + 1 + series.below(30), beats.count)] {
                    encoder.append(beat)
                    next += 1
                }
                #expect(encoder.lastOffset == beats[next - 1].offset)
                chunk = encoder.encoded()
            }
            #expect(chunk == encode(beats), "gap rate \(gapRate)")
        }
    }

    @Test("a heartbeat chunk is not a quantity chunk, nor the other way round")
    func kinds() {
        let beats = encode([Heartbeat(offset: 1)])
        let points = encode([QuantitySeriesPoint(time: 1, value: 1)])
        #expect(throws: SeriesCodingError.wrongKind(found: 0x48, expected: 0x51)) { try QuantitySeriesReader.decode(beats) }
        #expect(throws: SeriesCodingError.wrongKind(found: 0x51, expected: 0x48)) { try HeartbeatSeriesReader.decode(points) }
    }
}
