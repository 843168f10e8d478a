import SensorBackend
import SensorFrames
import Timestamps

/// The built-in mock chest strap: a seeded, realistic heart (see `HeartSimulator`) behind the
/// same frames a BLE strap sends. On start it "connects" and answers the reads a real
/// connection makes (Body Sensor Location, Device Name, Device Information, Battery Level),
/// then notifies encoded Heart Rate Measurements `hz` times a second until cancelled (every
/// mock on the one `MockClock` thread, each on its own schedule from its own start). Its
/// battery starts at 95 % and loses 1 % every ten minutes, notified when it changes.
///
/// With `ecg` or `acceleration` on it also streams as a Polar H10 does over its PMD service:
/// after the connect-time reads, for each stream, the start request a client would have written
/// to the PMD control point (a `.write` frame: ECG 130 Hz, 14 bit; acceleration 50 Hz, 16 bit,
/// ±8 G) and the control point's success indication; then, at each tick, the PMD data frames
/// whose samples have become final (ECG: 73 int24 µV samples a frame, raw frame type 0;
/// acceleration: 36 int16 x y z mG samples, raw frame type 1). Frames are stamped with the
/// device time of their last sample: nanoseconds since 2000-01-01 from the wall time at the
/// mock's start, plus the samples' own time (exactly 10⁹ / rate ns apart). The ECG follows the
/// beats the strap detects (seeded with `seed`); while contact is lost it carries no beats, only
/// the baseline wander and noise, still without gaps. The acceleration follows the scenario's
/// effort (seeded with `seed` + 1).
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
        /// Whether the mock streams an ECG as PMD frames (the mock's `ecg` key).
        public var ecg: Bool
        /// Whether the mock streams acceleration as PMD frames (the mock's `acc` key).
        public var acceleration: Bool

        public init(
            id: SensorID, restingBPM: Double = 62, hz: Double = 1, emitsRRIntervals: Bool = true,
            location: BodySensorLocation = .chest, seed: UInt64 = 1, contactLossProbability: Double? = nil,
            ecg: Bool = false, acceleration: Bool = false
        ) {
            self.id = id
            self.restingBPM = restingBPM
            self.hz = hz
            self.emitsRRIntervals = emitsRRIntervals
            self.location = location
            self.seed = seed
            self.contactLossProbability = contactLossProbability
            self.ecg = ecg
            self.acceleration = acceleration
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
        let start = MockClock.now()
        let streams = MockPMDStreams(
            ecg: settings.ecg, acceleration: settings.acceleration, seed: settings.seed,
            clock: MockDeviceClock(startingAtUnixMicroseconds: Timestamp.now().microsecondsSinceEpoch))
        for exchange in streams.startExchanges {
            sink.send(frame(.write, .pmdControlPoint, exchange.request))
            sink.send(frame(.notify, .pmdControlPoint, exchange.response))
        }
        sink.report(SensorStatus(transport: .mock, device: id, state: .streaming))
        defer {
            sink.send(frame(.disconnected))
            sink.report(SensorStatus(transport: .mock, device: id, state: .stopped(reason: "the mock was stopped")))
        }

        try await MockClock.shared.run(
            MockStrap(settings: settings, simulator: simulator, streams: streams, battery: battery, start: start, send: sink.send))
    }

    /// One running mock's schedule on the shared `MockClock`: its `tick`-th measurement is due
    /// `tick` periods after `start` and reads the simulator at that elapsed time; the PMD frames
    /// that became due by then follow it.
    private final class MockStrap: MockClockEntry {
        let settings: Settings
        var simulator: HeartSimulator
        var streams: MockPMDStreams
        var battery: UInt8
        let start: UInt64
        let send: (SensorFrame) -> Void
        private let period: Double
        private var tick = 1

        init(
            settings: Settings, simulator: HeartSimulator, streams: MockPMDStreams, battery: UInt8, start: UInt64,
            send: @escaping (SensorFrame) -> Void
        ) {
            self.settings = settings
            self.simulator = simulator
            self.streams = streams
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
            var beats: [Double] = []
            let reading = streams.isStreaming ? simulator.reading(at: elapsed, detectedBeats: &beats) : simulator.reading(at: elapsed)
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
            guard streams.isStreaming else { return }
            let simulator = simulator
            for value in streams.frames(at: elapsed, beats: beats, effort: { simulator.scenarioEffort(at: $0) }) {
                send(frame(.notify, .pmdData, value))
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
