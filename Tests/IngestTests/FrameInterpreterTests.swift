import HealthModel
import HealthStore
import HealthUnits
import SensorFrames
import Testing
import Timestamps

@testable import Ingest

/// Frames as a strap would send them.
enum Frames {
    static let base = Timestamp(microsecondsSinceEpoch: 1_795_000_000_000_000)
    static let strap = SensorID("AA:BB:CC:DD:EE:FF")

    static func measurement(_ measurement: HeartRateMeasurement, at offset: Double, device: SensorID = strap) -> SensorFrame {
        SensorFrame(
            time: base.advanced(bySeconds: offset), transport: .ble, device: device, kind: .notify,
            characteristic: .heartRateMeasurement, value: measurement.encoded())
    }

    static func location(_ location: BodySensorLocation, device: SensorID = strap) -> SensorFrame {
        SensorFrame(time: base, transport: .ble, device: device, kind: .read, characteristic: .bodySensorLocation, value: location.encoded())
    }

    static func heartRate(_ bpm: UInt16, contact: SensorContact = .detected, rr: [UInt16] = [], energy: UInt16? = nil) -> HeartRateMeasurement {
        HeartRateMeasurement(heartRate: bpm, sensorContact: contact, energyExpended: energy, rrIntervals: rr)
    }
}

@Suite("Frame interpretation and the stored-sample policy")
struct FrameInterpreterTests {
    @Test("a measurement after a 0x2A38 read is tagged with that location")
    func locationFromRead() throws {
        var interpreter = FrameInterpreter()
        #expect(interpreter.interpret(Frames.location(.chest)).samples.isEmpty)
        let result = interpreter.interpret(Frames.measurement(Frames.heartRate(72), at: 1))
        let sample = try #require(result.samples.first)
        #expect(sample.type == .heartRate)
        #expect(try sample.quantity.doubleValue(for: .countPerMinute) == 72)
        #expect(sample.metadata.sensorLocation == .chest)
        #expect(sample.metadata.sensorContact == true)
        #expect(sample.device?.localIdentifier == "AA:BB:CC:DD:EE:FF")
        #expect(sample.start == Frames.base.advanced(bySeconds: 1))
    }

    @Test("a configured location wins; without either, none is stored")
    func locationOverride() throws {
        var interpreter = FrameInterpreter(locationOverrides: [Frames.strap: .wrist])
        _ = interpreter.interpret(Frames.location(.chest))
        #expect(interpreter.interpret(Frames.measurement(Frames.heartRate(72), at: 1)).samples.first?.metadata.sensorLocation == .wrist)
        var plain = FrameInterpreter()
        #expect(plain.interpret(Frames.measurement(Frames.heartRate(72), at: 1)).samples.first?.metadata.sensorLocation == nil)
    }

    @Test("contact not detected is skipped; contact unsupported is stored without a contact key")
    func contactPolicy() throws {
        var interpreter = FrameInterpreter()
        let lost = interpreter.interpret(Frames.measurement(Frames.heartRate(72, contact: .notDetected, rr: [800]), at: 1))
        #expect(lost.samples.isEmpty)
        #expect(lost.skips == [.contactNotDetected])
        let unsupported = interpreter.interpret(Frames.measurement(Frames.heartRate(72, contact: .unsupported), at: 2))
        #expect(unsupported.samples.count == 1)
        #expect(unsupported.samples.first?.metadata.sensorContact == nil)
    }

    @Test("heart rates outside 1…300 are skipped", arguments: [0, 301, 400, 65535] as [UInt16])
    func outOfRange(bpm: UInt16) {
        var interpreter = FrameInterpreter()
        let result = interpreter.interpret(Frames.measurement(Frames.heartRate(bpm), at: 1))
        #expect(result.samples.isEmpty)
        #expect(result.skips == [.heartRateOutOfRange])
    }

    @Test("the bounds 1 and 300 are stored", arguments: [1, 300] as [UInt16])
    func bounds(bpm: UInt16) {
        var interpreter = FrameInterpreter()
        #expect(interpreter.interpret(Frames.measurement(Frames.heartRate(bpm), at: 1)).samples.count == 1)
    }

    @Test("malformed frames are skipped with their reason")
    func malformed() {
        var interpreter = FrameInterpreter()
        let frame = SensorFrame(time: Frames.base, transport: .ble, device: Frames.strap, kind: .notify, characteristic: .heartRateMeasurement, value: [0x01, 0x48])
        let result = interpreter.interpret(frame)
        #expect(result.samples.isEmpty)
        #expect(result.skips.count == 1)
        #expect(result.skips.first?.category == "malformed frame")
    }

    @Test("RR intervals become one sample each, placed back from the frame's time, oldest first")
    func rrIntervals() throws {
        var interpreter = FrameInterpreter()
        let result = interpreter.interpret(Frames.measurement(Frames.heartRate(75, rr: [1024, 512]), at: 10))
        let rr = result.samples.filter { $0.type == .rrInterval }.sorted { $0.start < $1.start }
        #expect(rr.count == 2)
        #expect(try rr.map { try $0.quantity.doubleValue(for: .millisecond) } == [1000, 500])
        #expect(rr[1].end == Frames.base.advanced(bySeconds: 10))
        #expect(rr[1].start == Frames.base.advanced(bySeconds: 9.5))
        #expect(rr[0].end == rr[1].start)
        #expect(rr[0].start == Frames.base.advanced(bySeconds: 8.5))
    }

    @Test("the cumulative energy counter becomes interval samples; a reset starts afresh")
    func energy() throws {
        var interpreter = FrameInterpreter()
        #expect(interpreter.interpret(Frames.measurement(Frames.heartRate(90, energy: 100), at: 0)).samples.filter { $0.type == .activeEnergyBurned }.isEmpty)
        let next = interpreter.interpret(Frames.measurement(Frames.heartRate(90, energy: 103), at: 10)).samples.filter { $0.type == .activeEnergyBurned }
        #expect(next.count == 1)
        #expect(try next[0].quantity.doubleValue(for: .kilojoule) == 3)
        #expect(next[0].start == Frames.base && next[0].end == Frames.base.advanced(bySeconds: 10))
        let reset = interpreter.interpret(Frames.measurement(Frames.heartRate(90, energy: 0), at: 20)).samples.filter { $0.type == .activeEnergyBurned }
        #expect(reset.isEmpty)
    }

    @Test("device information reads name the device")
    func deviceInformation() throws {
        var interpreter = FrameInterpreter()
        for (characteristic, text) in [(0x2A00, "Polar H10 1234"), (0x2A29, "Polar Electro Oy"), (0x2A24, "H10"), (0x2A26, "5.0.0\0")] {
            _ = interpreter.interpret(SensorFrame(
                time: Frames.base, transport: .ble, device: Frames.strap, kind: .read,
                characteristic: CharacteristicID(rawValue: UInt16(characteristic)), value: Array(text.utf8)))
        }
        let device = try #require(interpreter.interpret(Frames.measurement(Frames.heartRate(60), at: 1)).samples.first?.device)
        #expect(device.name == "Polar H10 1234")
        #expect(device.manufacturer == "Polar Electro Oy")
        #expect(device.model == "H10")
        #expect(device.firmwareVersion == "5.0.0")
    }

    @Test("devices are kept apart")
    func devicesApart() {
        var interpreter = FrameInterpreter()
        let other = SensorID("11:22:33:44:55:66")
        _ = interpreter.interpret(Frames.location(.chest))
        _ = interpreter.interpret(Frames.location(.wrist, device: other))
        #expect(interpreter.interpret(Frames.measurement(Frames.heartRate(60), at: 1)).samples.first?.metadata.sensorLocation == .chest)
        #expect(interpreter.interpret(Frames.measurement(Frames.heartRate(60), at: 1, device: other)).samples.first?.metadata.sensorLocation == .wrist)
    }
}
