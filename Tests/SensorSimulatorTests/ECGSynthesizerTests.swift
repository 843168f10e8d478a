@testable import SensorSimulator
import TestSupport
import Testing

@Suite("ECG synthesizer")
struct ECGSynthesizerTests {
    /// The detected beats of a simulated wearer over `seconds`, read four times a second.
    static func beats(seed: UInt64 = 1, scenario: [Phase]? = nil, contactLoss: Double = 0, seconds: Double) -> [Double] {
        var settings = HeartSimulatorSettings(seed: seed, contactLossProbability: contactLoss)
        if let scenario { settings.scenario = scenario }
        var heart = HeartSimulator(settings: settings)
        var beats: [Double] = []
        for tick in 1...Int(seconds * 4) { _ = heart.reading(at: Double(tick) / 4, detectedBeats: &beats) }
        return beats
    }

    /// Every final sample of `beats`, all known through `through`, rendered in one call.
    static func render(_ beats: [Double], through: Double, settings: ECGSynthesizer.Settings = .init()) throws -> [Int32] {
        var ecg = ECGSynthesizer(settings: settings)
        for beat in beats { try ecg.addBeat(at: beat) }
        ecg.markBeatsKnown(through: through)
        return ecg.renderFinalSamples()
    }

    /// Samples whose time is within `window` of `time`, with their times.
    static func samples(_ ecg: [Int32], rate: Double = 130, around time: Double, in window: ClosedRange<Double>)
        -> [(time: Double, value: Int32)] {
        let first = max(0, Int(((time + window.lowerBound) * rate).rounded(.up)))
        let last = min(ecg.count - 1, Int(((time + window.upperBound) * rate).rounded(.down)))
        guard first <= last else { return [] }
        return (first...last).map { (Double($0) / rate, ecg[$0]) }
    }

    static let clean = ECGSynthesizer.Settings(amplitudeVariability: 0, baselineWanderMicrovolts: 0, noiseMicrovolts: 0)

    @Test("each beat's R peak is the maximum within ±100 ms, within one sample of the beat, at 900…1500 µV",
          arguments: [
            (UInt64(1), [Phase.rest(seconds: 600)]),
            (UInt64(2), HeartSimulatorSettings.defaultScenario),
            (UInt64(3), [Phase.exercise(seconds: 600, intensity: 1)]),
          ])
    func rPeaks(seed: UInt64, scenario: [Phase]) throws {
        let beats = Self.beats(seed: seed, scenario: scenario, seconds: 300)
        let ecg = try Self.render(beats, through: 300, settings: .init(seed: seed))
        let end = Double(ecg.count) / 130
        var checked = 0
        for beat in beats where beat - 0.1 >= 0 && beat + 0.1 < end {
            let window = Self.samples(ecg, around: beat, in: -0.1...0.1)
            let peak = try #require(window.max { $0.value < $1.value })
            #expect(abs(peak.time - beat) <= 1.0 / 130, "R at \(beat) s, maximum at \(peak.time) s")
            #expect((900...1500).contains(peak.value), "R at \(beat) s reads \(peak.value) µV")
            checked += 1
        }
        #expect(checked > 250)
    }

    @Test("without noise, wander and variability the waves have their documented heights")
    func waveHeights() throws {
        // A steady 60 bpm: every beat ends an RR of 1 s.
        let beats = (1...20).map(Double.init)
        let ecg = try Self.render(beats, through: 21, settings: Self.clean)
        for beat in beats.dropFirst() {
            let p = try #require(Self.samples(ecg, around: beat, in: -0.25 ... -0.1).map(\.value).max())
            let q = try #require(Self.samples(ecg, around: beat, in: -0.045 ... -0.015).map(\.value).min())
            let r = try #require(Self.samples(ecg, around: beat, in: -0.01...0.01).map(\.value).max())
            let s = try #require(Self.samples(ecg, around: beat, in: 0.015...0.045).map(\.value).min())
            let t = try #require(Self.samples(ecg, around: beat, in: 0.2...0.4).map(\.value).max())
            #expect((140...150).contains(p), "P \(p)")
            #expect((-100 ... -60).contains(q), "Q \(q)")   // between samples and beside R's rise
            #expect((1080...1200).contains(r), "R \(r)")
            #expect((-250 ... -170).contains(s), "S \(s)")
            #expect((290...300).contains(t), "T \(t)")
            // Between T and the next P the line is flat.
            #expect(Self.samples(ecg, around: beat, in: 0.6...0.7).allSatisfy { abs($0.value) <= 1 })
        }
    }

    @Test("the T wave comes sooner at higher rates, as Bazett's rule has the QT interval shorten")
    func bazett() throws {
        func tPeakDelay(rr: Double) throws -> Double {
            let beats = (1...20).map { Double($0) * rr }
            let ecg = try Self.render(beats, through: 21 * rr, settings: Self.clean)
            let t = try #require(Self.samples(ecg, around: beats[10], in: 0.08...(rr - 0.1)).max { $0.value < $1.value })
            return t.time - beats[10]
        }
        let slow = try tPeakDelay(rr: 1.2), normal = try tPeakDelay(rr: 1.0), fast = try tPeakDelay(rr: 0.4)
        #expect(abs(normal - 0.28) <= 1.0 / 130)
        #expect(abs(fast - 0.28 * 0.4.squareRoot()) <= 1.0 / 130)
        #expect(abs(slow - 0.28 * 1.2.squareRoot()) <= 1.0 / 130)
        #expect(slow > normal && normal > fast)
    }

    @Test("the same seed gives the same samples however beats and rendering are split into calls")
    func splitIndependence() throws {
        let beats = Self.beats(seed: 4, scenario: HeartSimulatorSettings.defaultScenario, contactLoss: 0.05, seconds: 400)
        let whole = try Self.render(beats, through: 400, settings: .init(seed: 9))
        var rng = SplitMix64(seed: 0x5EED)
        for _ in 0..<5 {
            var ecg = ECGSynthesizer(settings: .init(seed: 9))
            var pieces: [Int32] = []
            var next = 0
            var known = 0.0
            while known < 400 {
                known = min(400, known + Double.random(in: 0.01...3, using: &rng))
                while next < beats.count, beats[next] <= known {
                    try ecg.addBeat(at: beats[next])
                    next += 1
                }
                if Bool.random(using: &rng) { ecg.markBeatsKnown(through: known) }
                pieces += ecg.renderFinalSamples(limit: Int.random(in: 0...400, using: &rng))
            }
            ecg.markBeatsKnown(through: 400)
            pieces += ecg.renderFinalSamples()
            #expect(pieces == whole)
        }
        let other = try Self.render(beats, through: 400, settings: .init(seed: 10))
        #expect(other.count == whole.count && other != whole)
    }

    @Test("samples become final only where no later beat can reach")
    func horizon() throws {
        var ecg = ECGSynthesizer(settings: .init())
        #expect(ecg.finalSampleCount == 0 && ecg.renderFinalSamples().isEmpty)
        #expect(abs(ecg.leadSeconds - 0.248) < 1e-12)
        try ecg.addBeat(at: 1)
        // The next beat may come 272/1024 s later, its P wave 248 ms before it.
        let horizon = 1 + 272.0 / 1024 - ecg.leadSeconds
        #expect(ecg.horizon == horizon)
        let rendered = ecg.renderFinalSamples()
        #expect(rendered.count == Int((horizon * 130).rounded(.up)))
        #expect(Double(rendered.count - 1) / 130 < horizon && Double(rendered.count) / 130 >= horizon)
        // The earliest next beat is still welcome; an earlier one is not.
        #expect(throws: ECGSynthesisError.beatTooSoon(time: 1.2, previousBeat: 1, shortestRR: 272.0 / 1024)) {
            try ecg.addBeat(at: 1.2)
        }
        try ecg.addBeat(at: 1 + 272.0 / 1024)
        ecg.markBeatsKnown(through: 5)
        #expect(throws: ECGSynthesisError.beatAfterItsTime(time: 5, beatsKnownThrough: 5)) { try ecg.addBeat(at: 5) }
        #expect(throws: ECGSynthesisError.beatTimeNotFinite(.infinity)) { try ecg.addBeat(at: .infinity) }
        #expect(ecg.horizon == 5 - ecg.leadSeconds)
        try ecg.addBeat(at: 5.5)
        #expect(ecg.lastBeat == 5.5)
    }

    @Test("with no beats known the line carries only the wander and the noise, and keeps coming")
    func noBeats() {
        var ecg = ECGSynthesizer(settings: .init(seed: 3))
        ecg.markBeatsKnown(through: 60)
        let line = ecg.renderFinalSamples()
        #expect(line.count == Int(((60 - ecg.leadSeconds) * 130).rounded(.up)))
        #expect(line.allSatisfy { abs($0) <= 50 + 60 })
        let mean = Double(line.map(Int.init).reduce(0, +)) / Double(line.count)
        #expect(abs(mean) < 10)
        let deviation = (line.map { (Double($0) - mean) * (Double($0) - mean) }.reduce(0, +) / Double(line.count)).squareRoot()
        #expect(deviation > 20 && deviation < 50)   // √(50²/2 + 10²) ≈ 37 µV
    }
}
