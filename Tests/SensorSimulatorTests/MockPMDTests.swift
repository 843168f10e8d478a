import PMDDecoding
import SensorFrames
@testable import SensorSimulator
import SensorTestSupport
import Testing

@Suite("The mock strap's PMD streams")
struct MockPMDTests {
    static let ecgFrameNanoseconds = 73 * 1e9 / 130
    static let accFrameNanoseconds = 36 * 1e9 / 50

    /// The simulator a mock with `settings` runs (as MockSensor builds it).
    static func simulatorSettings(_ settings: MockSensor.Settings) -> HeartSimulatorSettings {
        var simulator = HeartSimulatorSettings()
        simulator.restingBPM = settings.restingBPM
        simulator.seed = settings.seed
        simulator.emitsRRIntervals = settings.emitsRRIntervals
        if let chance = settings.contactLossProbability { simulator.contactLossProbability = chance }
        return simulator
    }

    /// Decoded data frames of one measurement type, in the order sent.
    static func decoded(_ values: [[UInt8]], _ type: PMDMeasurementType) throws -> [PMDDataFrame] {
        try values.map { try PMDDataFrame(bytes: $0) }.filter { $0.header.measurementType == type }
    }

    /// Checks that consecutive frames' timestamps advance by exactly the samples' time.
    static func expectSteps(_ frames: [PMDDataFrame], nanoseconds: Double, _ comment: Comment) {
        for (a, b) in zip(frames, frames.dropFirst()) {
            #expect(b.header.timestamp > a.header.timestamp, comment)
            #expect(abs(Double(b.header.timestamp - a.header.timestamp) - nanoseconds) < 1, comment)
        }
    }

    @Test("the device clock starts at the wall time and moves 10⁹ / rate ns a sample")
    func deviceClock() {
        let clock = MockDeviceClock(startingAtUnixMicroseconds: 946_684_800_000_001)   // 2000-01-01T00:00:00.000001Z
        #expect(clock.start == 1000)
        #expect(clock.timestamp(ofSample: 0, sampleRate: 130) == 1000)
        #expect(clock.timestamp(ofSample: 13, sampleRate: 130) == 1000 + 100_000_000)
        #expect(clock.timestamp(ofSample: 73, sampleRate: 130) == 1000 + 561_538_461)
        #expect(clock.timestamp(ofSample: 130 * 86_400 * 365 * 10, sampleRate: 130) == 1000 + 315_360_000_000_000_000)
        #expect(MockDeviceClock(startingAtUnixMicroseconds: 0).start == 0)
    }

    @Test("frames of whole samples, never overlapping and without holes, through lost contact; no beats while it is lost")
    func streamsThroughLostContact() throws {
        let settings = MockSensor.Settings(id: "m", hz: 4, seed: 11, contactLossProbability: 0.05, ecg: true, acceleration: true)
        var simulator = HeartSimulator(settings: Self.simulatorSettings(settings))
        var streams = MockPMDStreams(ecg: true, acceleration: true, seed: 11, clock: MockDeviceClock(startingAtUnixMicroseconds: 1_700_000_000_000_000))
        var values: [[UInt8]] = []
        var lostTicks: Set<Int> = []
        let ticks = 4 * 600
        for tick in 1...ticks {
            let elapsed = Double(tick) / 4
            var beats: [Double] = []
            let reading = simulator.reading(at: elapsed, detectedBeats: &beats)
            if !reading.contactDetected { lostTicks.insert(tick) }
            values += streams.frames(at: elapsed, beats: beats) { simulator.scenarioEffort(at: $0) }
        }
        #expect(lostTicks.count > 40, "contact was lost at \(lostTicks.count) ticks")
        let ecg = try Self.decoded(values, .ecg), acc = try Self.decoded(values, .acc)
        #expect(ecg.allSatisfy { $0.samples.count == 73 && $0.header.rawFrameType == 0 })
        #expect(acc.allSatisfy { $0.samples.count == 36 && $0.header.rawFrameType == 1 })
        Self.expectSteps(ecg, nanoseconds: Self.ecgFrameNanoseconds, "ecg")
        Self.expectSteps(acc, nanoseconds: Self.accFrameNanoseconds, "acc")
        // Every final sample but the last partial frame has been sent.
        let ecgSamples = ecg.count * 73, accSamples = acc.count * 36
        #expect(ecgSamples <= Int((600 + 0.018) * 130) + 1 && ecgSamples >= Int((600 - 0.248) * 130) - 73)
        #expect(accSamples == (600 * 50 + 1) / 36 * 36)
        // The first frame's last sample is sample 72, at 72 sample periods after the start.
        let start = try #require(PMDClock.polarNanoseconds(unixNanoseconds: 1_700_000_000_000_000_000))
        #expect(ecg.first?.header.timestamp == start + 72 * 1_000_000_000 / 130)
        #expect(acc.first?.header.timestamp == start + 35 * 1_000_000_000 / 50)

        // Deep in a loss of contact (lost for the last 1.5 s at least), no beat reaches: from 0.75 s
        // to 0.25 s before the tick, neither the last detected beat's T wave nor the next one's P wave.
        let microvolts = ecg.flatMap { frame -> [Int32] in
            guard case .ecg(let s) = frame.samples else { return [] }
            return s
        }
        var flatWindows = 0
        for tick in lostTicks.sorted() where (1...6).allSatisfy({ lostTicks.contains(tick - $0) }) {
            let time = Double(tick) / 4
            let range = Int(((time - 0.75) * 130).rounded(.up))..<Int((time - 0.25) * 130)
            guard range.upperBound <= microvolts.count else { continue }
            #expect(microvolts[range].allSatisfy { abs($0) <= 110 }, "a beat at \(time) s with no contact")
            flatWindows += 1
        }
        #expect(flatWindows > 10)
        #expect(microvolts.filter { $0 > 800 }.count > 400)   // but beats elsewhere
        // Acceleration: upright at rest for the first minute, moving in the effort that follows.
        let accelerations = acc.flatMap { frame -> [PMDAccSample] in
            guard case .acc(let s) = frame.samples else { return [] }
            return s
        }
        let resting = accelerations[0..<(55 * 50)].map { abs(Int($0.x)) }
        #expect(resting.allSatisfy { $0 > 900 && $0 < 1100 })
        #expect(accelerations[(200 * 50)..<(220 * 50)].contains { $0.x > 1300 })
    }

    @Test("with ecg and acc on, the mock writes the start requests, then streams frames stamped 10⁹ / rate ns a sample")
    func mockStreams() async throws {
        let streaming = MockSensor.Settings(id: "mock-pmd", hz: 20, seed: 4, contactLossProbability: 0, ecg: true, acceleration: true)
        let plain = MockSensor.Settings(id: "mock-plain", hz: 20, seed: 5, contactLossProbability: 0)
        let collector = FrameCollector()
        func data(_ frames: [SensorFrame]) -> [SensorFrame] {
            frames.filter { $0.device == streaming.id && $0.characteristic == .pmdData }
        }
        func frames(of type: UInt8, _ frames: [SensorFrame]) -> Int { data(frames).filter { $0.value.first == type }.count }
        // A hang bound, not a timing one: a loaded test pool can hold the waiting task for seconds.
        await withThrowingTaskGroup(of: Void.self) { group in
            for mock in [streaming, plain].map(MockSensor.init) {
                group.addTask { try await mock.run(into: collector.sink) }
            }
            let arrived = await collector.wait { frames(of: 0, $0) >= 4 && frames(of: 2, $0) >= 3 }
            #expect(arrived, "\(collector.frames.count) frames")
            group.cancelAll()
        }
        let all = collector.frames
        #expect(!all.contains { $0.device == plain.id && ($0.characteristic == .pmdData || $0.characteristic == .pmdControlPoint) })
        let own = all.filter { $0.device == streaming.id }

        // After the connect-time reads: per stream, the start request written and its success indication.
        let battery = try #require(own.firstIndex { $0.kind == .read && $0.characteristic == .batteryLevel })
        let controlPoint = own.enumerated().filter { $0.element.characteristic == .pmdControlPoint }
        #expect(controlPoint.map(\.offset) == Array((battery + 1)...(battery + 4)))
        let exchange = controlPoint.map(\.element)
        #expect(exchange.map(\.kind) == [.write, .notify, .write, .notify])
        #expect(exchange[0].value == PMDControlPointRequest.start(.ecg, PMDSettings(sampleRate: 130, resolution: 14)).bytes)
        #expect(exchange[2].value == PMDControlPointRequest.start(.acc, PMDSettings(sampleRate: 50, resolution: 16, range: 8)).bytes)
        for (index, type) in [(1, PMDMeasurementType.ecg), (3, .acc)] {
            guard case .response(let response) = try PMDControlPointIndication(bytes: exchange[index].value) else {
                Issue.record("not a response")
                continue
            }
            #expect(response.opCode == .requestMeasurementStart && response.measurementType == type && response.error == nil)
        }
        let firstData = try #require(own.firstIndex { $0.characteristic == .pmdData })
        #expect(firstData > battery + 4)
        #expect(own.allSatisfy { $0.characteristic != .pmdData || $0.kind == .notify })

        let values = data(all).map(\.value)
        let ecg = try Self.decoded(values, .ecg), acc = try Self.decoded(values, .acc)
        #expect(ecg.count >= 4 && acc.count >= 3)
        #expect(ecg.allSatisfy { $0.samples.count == 73 && !$0.header.isCompressed && $0.header.frameType == 0 })
        #expect(acc.allSatisfy { $0.samples.count == 36 && !$0.header.isCompressed && $0.header.frameType == 1 })
        Self.expectSteps(ecg, nanoseconds: Self.ecgFrameNanoseconds, "ecg")
        Self.expectSteps(acc, nanoseconds: Self.accFrameNanoseconds, "acc")

        // The device clock started at the wall time of the connection (a loose bound: minutes, not jitter).
        let connected = try #require(own.first { $0.kind == .connected }).time.microsecondsSinceEpoch
        let start = try #require(PMDClock.unixNanoseconds(polarNanoseconds: ecg[0].header.timestamp - 72 * 1_000_000_000 / 130))
        #expect(abs(start / 1000 - connected) < 60_000_000)

        // About 130 ECG samples per second of mock time: every tick's final samples, less a partial frame.
        let ticks = own.filter { $0.characteristic == .heartRateMeasurement }.count
        let elapsed = Double(ticks) / streaming.hz
        let ecgSamples = ecg.count * 73
        #expect(Double(ecgSamples) >= (elapsed - 0.248) * 130 - 74, "\(ecgSamples) samples in \(elapsed) s")
        #expect(Double(ecgSamples) <= (elapsed + 0.018) * 130 + 1, "\(ecgSamples) samples in \(elapsed) s")
        // Acceleration samples are final at once: those at or before the last tick, in whole frames.
        #expect((Int(elapsed * 50) / 36...(Int(elapsed * 50) + 1) / 36).contains(acc.count), "\(acc.count) frames in \(elapsed) s")

        // And they are the samples of the mock's own wearer: the simulator's beats, the ECG seeded with the mock's seed.
        var heart = HeartSimulator(settings: Self.simulatorSettings(streaming))
        var beats: [Double] = []
        _ = heart.reading(at: elapsed, detectedBeats: &beats)
        var synthesizer = ECGSynthesizer(settings: .init(seed: streaming.seed))
        for beat in beats { try synthesizer.addBeat(at: beat) }
        synthesizer.markBeatsKnown(through: elapsed)
        let expected = synthesizer.renderFinalSamples()
        let sent = ecg.flatMap { frame -> [Int32] in
            guard case .ecg(let s) = frame.samples else { return [] }
            return s
        }
        #expect(Array(expected.prefix(sent.count)) == sent)
    }
}
