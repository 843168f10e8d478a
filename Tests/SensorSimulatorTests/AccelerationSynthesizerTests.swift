import PMDDecoding
import SensorSimulator
import TestSupport
import Testing

@Suite("Acceleration synthesizer")
struct AccelerationSynthesizerTests {
    static func magnitude(_ sample: PMDAccSample) -> Double {
        let (x, y, z) = (Double(sample.x), Double(sample.y), Double(sample.z))
        return (x * x + y * y + z * z).squareRoot()
    }

    static func mean(_ values: [Double]) -> Double { values.reduce(0, +) / Double(values.count) }

    static func deviation(_ values: [Double]) -> Double {
        let m = mean(values)
        return (values.map { ($0 - m) * ($0 - m) }.reduce(0, +) / Double(values.count)).squareRoot()
    }

    @Test("at rest the magnitude averages 1000 mG, gravity on x, and the chest moves only a little",
          arguments: [UInt64(1), 2, 3, 99])
    func rest(seed: UInt64) {
        var acc = AccelerationSynthesizer(settings: .init(seed: seed))
        let samples = acc.render(count: 60 * 50) { _ in 0 }
        #expect(samples.count == 3000)
        #expect(abs(Self.mean(samples.map(Self.magnitude)) - 1000) < 5)
        #expect(Self.mean(samples.map { Double($0.x) }) > 960)
        #expect(Self.mean(samples.map { abs(Double($0.y)) }) < 200)
        #expect(Self.mean(samples.map { abs(Double($0.z)) }) < 200)
        #expect(Self.deviation(samples.map(Self.magnitude)) < 15)
    }

    @Test("steps at 2.5–3 Hz bounce more the harder the effort")
    func steps() {
        func vertical(effort: Double) -> [Double] {
            var acc = AccelerationSynthesizer(settings: .init(seed: 5))
            // Settle into the effort first (the motion follows it with a lag).
            _ = acc.render(count: 20 * 50) { _ in effort }
            return acc.render(count: 30 * 50) { _ in effort }.map { Double($0.x) }
        }
        func cadence(_ values: [Double]) -> Double {
            let m = Self.mean(values)
            let rises = zip(values, values.dropFirst()).filter { $0 < m && $1 >= m }.count
            return Double(rises) / 30
        }
        let easy = vertical(effort: 0.3), hard = vertical(effort: 0.9)
        #expect((2.5...3.0).contains(cadence(easy)), "\(cadence(easy)) Hz")
        #expect((2.5...3.0).contains(cadence(hard)), "\(cadence(hard)) Hz")
        #expect(cadence(hard) > cadence(easy))
        #expect(Self.deviation(hard) > 2.5 * Self.deviation(easy))
        #expect(Self.deviation(easy) > 100)
        let all = hard.map(abs)
        #expect(all.allSatisfy { $0 <= 8000 })
    }

    @Test("a new effort ramps in over a few seconds rather than at once")
    func ramp() {
        var acc = AccelerationSynthesizer(settings: .init(seed: 6))
        let samples = acc.render(count: 20 * 50) { $0 < 5 ? 0 : 1 }.map { Double($0.x) }
        let before = Self.deviation(Array(samples[150..<250]))
        let justAfter = Self.deviation(Array(samples[250..<300]))
        let later = Self.deviation(Array(samples[750..<1000]))
        #expect(before < 20)
        #expect(justAfter > before && justAfter < later / 2)
        #expect(later > 300)
    }

    @Test("the same seed and efforts give the same samples however rendering is split")
    func splitIndependence() {
        let effort: (Double) -> Double = { time in time.truncatingRemainder(dividingBy: 30) < 15 ? 0 : 0.7 }
        var whole = AccelerationSynthesizer(settings: .init(seed: 8))
        let expected = whole.render(count: 120 * 50, effort: effort)
        var rng = SplitMix64(seed: 0xACC5)
        var pieces = AccelerationSynthesizer(settings: .init(seed: 8))
        var got: [PMDAccSample] = []
        var time = 0.0
        while got.count < expected.count {
            if Bool.random(using: &rng) {
                got += pieces.render(count: min(Int.random(in: 0...200, using: &rng), expected.count - got.count), effort: effort)
            } else {
                time += Double.random(in: 0...2, using: &rng)
                got += pieces.render(through: min(time, pieces.sampleTime(expected.count - 1)), effort: effort)
            }
        }
        #expect(got == expected)
        var other = AccelerationSynthesizer(settings: .init(seed: 9))
        #expect(other.render(count: expected.count, effort: effort) != expected)
    }

    @Test("render(through:) renders the samples at or before a time")
    func renderThrough() {
        var acc = AccelerationSynthesizer(settings: .init(sampleRate: 50))
        #expect(acc.render(through: -1) { _ in 0 }.isEmpty)
        #expect(acc.render(through: 0) { _ in 0 }.count == 1)
        #expect(acc.render(through: 1) { _ in 0 }.count == 50)
        #expect(acc.renderedSampleCount == 51)
        #expect(acc.render(through: .nan) { _ in 0 }.isEmpty)
    }
}
