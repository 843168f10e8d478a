import SensorBackend
import SensorFrames
import Timestamps

/// The built-in mock chest strap: a seeded, realistic heart (see `HeartSimulator`) behind the
/// same frames a BLE strap sends. On start it "connects" and answers the reads a real
/// connection makes (Body Sensor Location, Device Name, Device Information, Battery Level),
/// then notifies encoded Heart Rate Measurements `hz` times a second until cancelled (every
/// mock on the one `MockClock` thread, each on its own schedule from its own start). Its
/// battery starts at 95 % and loses 1 % every ten minutes, notified when it changes.
public struct MockSensor: SensorBackend {
    /// How one mock strap behaves.
    public struct Settings: Sendable, Hashable {
        public var id: SensorID
        public var restingBPM: Double
        public var hz: Double
        public var emitsRRIntervals: Bool
        public var location: BodySensorLocation
        public var seed: UInt64
        /// Chance per second of a lost-contact episode; nil keeps the simulator's default.
        public var contactLossProbability: Double?

        public init(
            id: SensorID, restingBPM: Double = 62, hz: Double = 1, emitsRRIntervals: Bool = true,
            location: BodySensorLocation = .chest, seed: UInt64 = 1, contactLossProbability: Double? = nil
        ) {
            self.id = id
            self.restingBPM = restingBPM
            self.hz = hz
            self.emitsRRIntervals = emitsRRIntervals
            self.location = location
            self.seed = seed
            self.contactLossProbability = contactLossProbability
        }
    }

    public let settings: Settings
    public var name: String { settings.id.rawValue }

    public init(settings: Settings) {
        self.settings = settings
    }

    public func run(into sink: FrameSink) async throws {
        let simulator = HeartSimulator(settings: simulatorSettings)
        let id = settings.id
        func frame(_ kind: FrameKind, _ characteristic: CharacteristicID? = nil, _ value: [UInt8] = []) -> SensorFrame {
            Self.frame(of: id, kind, characteristic, value)
        }
        sink.report(SensorStatus(transport: .mock, device: id, state: .connecting))
        sink.send(frame(.connected))
        sink.send(frame(.read, .bodySensorLocation, settings.location.encoded()))
        for (field, text) in deviceInformation {
            sink.send(frame(.read, field.characteristic, Array(text.utf8)))
        }
        let battery = Self.batteryLevel(afterSeconds: 0)
        sink.send(frame(.read, .batteryLevel, [battery]))
        sink.report(SensorStatus(transport: .mock, device: id, state: .streaming))
        defer {
            sink.send(frame(.disconnected))
            sink.report(SensorStatus(transport: .mock, device: id, state: .stopped(reason: "the mock was stopped")))
        }

        try await MockClock.shared.run(
            MockStrap(settings: settings, simulator: simulator, battery: battery, start: MockClock.now(), send: sink.send))
    }

    /// One running mock's schedule on the shared `MockClock`: its `tick`-th measurement is due
    /// `tick` periods after `start` and reads the simulator at that elapsed time.
    private final class MockStrap: MockClockEntry {
        let settings: Settings
        var simulator: HeartSimulator
        var battery: UInt8
        let start: UInt64
        let send: (SensorFrame) -> Void
        private let period: Double
        private var tick = 1

        init(settings: Settings, simulator: HeartSimulator, battery: UInt8, start: UInt64, send: @escaping (SensorFrame) -> Void) {
            self.settings = settings
            self.simulator = simulator
            self.battery = battery
            self.start = start
            self.send = send
            period = 1 / settings.hz
        }

        private var elapsed: Double { Double(tick) * period }

        var due: UInt64 { start + UInt64(elapsed * 1e9) }

        func fire() {
            let elapsed = elapsed
            tick += 1
            let reading = simulator.reading(at: elapsed)
            let measurement = HeartRateMeasurement(
                heartRate: reading.heartRate,
                sensorContact: reading.contactDetected ? .detected : .notDetected,
                energyExpended: reading.energyExpendedKJ,
                rrIntervals: settings.emitsRRIntervals ? reading.rrIntervals : [])
            send(frame(.notify, .heartRateMeasurement, measurement.encoded()))
            let level = MockSensor.batteryLevel(afterSeconds: elapsed)
            if level != battery {
                battery = level
                send(frame(.notify, .batteryLevel, [battery]))
            }
        }

        private func frame(_ kind: FrameKind, _ characteristic: CharacteristicID, _ value: [UInt8]) -> SensorFrame {
            MockSensor.frame(of: settings.id, kind, characteristic, value)
        }
    }

    /// A frame of the mock `id`, stamped now.
    static func frame(of id: SensorID, _ kind: FrameKind, _ characteristic: CharacteristicID?, _ value: [UInt8]) -> SensorFrame {
        SensorFrame(time: .now(), transport: .mock, device: id, kind: kind, characteristic: characteristic, value: value)
    }

    /// The mock battery's level after running `seconds`.
    static func batteryLevel(afterSeconds seconds: Double) -> UInt8 {
        UInt8(max(5, 95 - Int(seconds / 600)))
    }

    private var simulatorSettings: HeartSimulatorSettings {
        var simulator = HeartSimulatorSettings()
        simulator.restingBPM = settings.restingBPM
        simulator.seed = settings.seed
        simulator.emitsRRIntervals = settings.emitsRRIntervals
        if let chance = settings.contactLossProbability { simulator.contactLossProbability = chance }
        return simulator
    }

    private var deviceInformation: [(DeviceInformationField, String)] {
        [
            (.deviceName, "hrmd mock strap \(settings.id.rawValue)"),
            (.manufacturerName, "hrmd"),
            (.modelNumber, "mock"),
            (.firmwareRevision, "1.0"),
        ]
    }
}
