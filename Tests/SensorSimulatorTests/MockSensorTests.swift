import SensorFrames
import SensorSimulator
import SensorTestSupport
import Testing

@Suite("Mock straps on the shared clock")
struct MockSensorTests {
    /// The measurements a mock with `settings` sends first: the simulator read at each period.
    private func expectedMeasurements(_ settings: MockSensor.Settings, count: Int) -> [[UInt8]] {
        var simulator = HeartSimulatorSettings()
        simulator.restingBPM = settings.restingBPM
        simulator.seed = settings.seed
        simulator.emitsRRIntervals = settings.emitsRRIntervals
        if let chance = settings.contactLossProbability { simulator.contactLossProbability = chance }
        var heart = HeartSimulator(settings: simulator)
        return (0..<count).map { index in
            let reading = heart.reading(at: Double(index + 1) / settings.hz)
            return HeartRateMeasurement(
                heartRate: reading.heartRate, sensorContact: reading.contactDetected ? .detected : .notDetected,
                energyExpended: reading.energyExpendedKJ, rrIntervals: settings.emitsRRIntervals ? reading.rrIntervals : []
            ).encoded()
        }
    }

    private func measurements(of device: SensorID, in frames: [SensorFrame]) -> [[UInt8]] {
        frames.filter { $0.device == device && $0.kind == .notify && $0.characteristic == .heartRateMeasurement }.map(\.value)
    }

    @Test("three mocks at their own rates each send their own simulator's readings in order, and nothing after they stop")
    func eachMockKeepsItsOwnSchedule() async throws {
        let settings: [MockSensor.Settings] = [
            .init(id: "mock-a", restingBPM: 60, hz: 50, seed: 1),
            .init(id: "mock-b", restingBPM: 80, hz: 20, emitsRRIntervals: false, seed: 2, contactLossProbability: 0),
            .init(id: "mock-c", restingBPM: 70, hz: 35, location: .wrist, seed: 3),
        ]
        let collector = FrameCollector()
        let wanted = 12
        // A hang bound, not a timing one: a loaded test pool can hold the waiting task for seconds.
        await withThrowingTaskGroup(of: Void.self) { group in
            for mock in settings.map(MockSensor.init) {
                group.addTask { try await mock.run(into: collector.sink) }
            }
            let arrived = await collector.wait { frames in
                settings.allSatisfy { measurements(of: $0.id, in: frames).count >= wanted }
            }
            #expect(arrived, "\(collector.frames.count) frames")
            group.cancelAll()
        }
        let frames = collector.frames
        for mock in settings {
            let own = frames.filter { $0.device == mock.id }
            let sent = measurements(of: mock.id, in: frames)
            #expect(sent == expectedMeasurements(mock, count: sent.count), "\(mock.id)")
            #expect(own.first?.kind == .connected)
            #expect(own.last?.kind == .disconnected, "\(mock.id): nothing follows the disconnection")
            #expect(own.filter { $0.kind == .disconnected }.count == 1)
        }
    }
}
