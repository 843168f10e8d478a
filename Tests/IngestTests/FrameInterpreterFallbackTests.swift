import ANTDecoding
import HealthModel
import HealthStore
import HealthUnits
import SensorFrames
import Testing
import Timestamps

@testable import Ingest

/// ANT+ broadcasts as a stick hands them on: the whole message, extended data naming the strap.
enum ANTFrames {
    static let strap = SensorID("ant-4242")

    static func page(_ number: UInt8, toggle: Bool, _ b1: UInt8 = 0xFF, _ b2: UInt8 = 0xFF, _ b3: UInt8 = 0xFF, beatTime: UInt16, count: UInt8, bpm: UInt8) -> [UInt8] {
        [number | (toggle ? 0x80 : 0), b1, b2, b3, UInt8(beatTime & 0xFF), UInt8(beatTime >> 8), count, bpm]
    }

    static func frame(_ data: [UInt8], at offset: Double, device: SensorID = strap) -> SensorFrame {
        let message = ANTMessage(id: ANTMessageID.broadcastData, payload: [0] + data + [0x80, 0x92, 0x10, 120, 1])
        return SensorFrame(time: Frames.base.advanced(bySeconds: offset), transport: .ant, device: device, kind: .notify, value: message.encoded())
    }
}

@Suite("ANT+ and serial frames")
struct FrameInterpreterFallbackTests {
    @Test("one heart-rate sample per beat, RR when the count advanced by one")
    func antBeats() throws {
        var interpreter = FrameInterpreter()
        var samples: [QuantitySample] = []
        // Four messages a second; a beat every second (1024 ticks).
        for message in 0..<12 {
            let beats = message / 4
            let data = ANTFrames.page(0, toggle: false, beatTime: UInt16(beats * 1024), count: UInt8(beats), bpm: 60)
            samples += interpreter.interpret(ANTFrames.frame(data, at: Double(message) / 4)).samples
        }
        let heartRates = samples.filter { $0.type == .heartRate }
        #expect(heartRates.count == 3)
        #expect(try heartRates.map { try $0.quantity.doubleValue(for: .countPerMinute) } == [60, 60, 60])
        #expect(heartRates.allSatisfy { $0.metadata.sensorLocation == nil && $0.device?.localIdentifier == "ant-4242" })
        let rr = samples.filter { $0.type == .rrInterval }
        #expect(rr.count == 2)
        #expect(try rr.map { try $0.quantity.doubleValue(for: .second) } == [1, 1])
    }

    @Test("the samples of a beat carry the page's beat count and event time; a GATT reading carries none")
    func antBeatStamps() throws {
        var interpreter = FrameInterpreter()
        var samples: [QuantitySample] = []
        for (offset, time, count) in [(0.0, UInt16(64_000), UInt8(254)), (0.25, 64_000, 254), (1, 65_300, 255), (2, 1_050, 0)] {
            let data = ANTFrames.page(0, toggle: false, beatTime: time, count: count, bpm: 57)
            samples += interpreter.interpret(ANTFrames.frame(data, at: offset)).samples
        }
        let stamps = samples.filter { $0.type == .heartRate }.map(\.antBeat)
        #expect(stamps == [
            ANTBeatStamp(count: 254, eventTime: 64_000), ANTBeatStamp(count: 255, eventTime: 65_300),
            ANTBeatStamp(count: 0, eventTime: 1_050),
        ])
        let rr = samples.filter { $0.type == .rrInterval }
        #expect(rr.map(\.antBeat) == [ANTBeatStamp(count: 255, eventTime: 65_300), ANTBeatStamp(count: 0, eventTime: 1_050)])
        #expect(try rr.map { try $0.quantity.doubleValue(for: .second) } == [1300.0 / 1024, 1286.0 / 1024])

        let gatt = interpreter.interpret(Frames.measurement(Frames.heartRate(70, rr: [1024]), at: 3)).samples
        #expect(gatt.count == 2 && gatt.allSatisfy { $0.antBeat == nil })
    }

    @Test("a stamp packs the count above the event time")
    func packedStamp() {
        let stamp = ANTBeatStamp(count: 0xAB, eventTime: 0xCDEF)
        #expect(stamp.packed == 0xAB_CDEF)
        #expect(ANTBeatStamp(packed: stamp.packed) == stamp)
        #expect(ANTBeatStamp(packed: 0xFF_FFFF) == ANTBeatStamp(count: 255, eventTime: 65_535))
    }

    @Test("a missed beat gives no RR; a configured location is stored")
    func antMissedBeat() throws {
        var interpreter = FrameInterpreter(locationOverrides: [ANTFrames.strap: .chest])
        _ = interpreter.interpret(ANTFrames.frame(ANTFrames.page(0, toggle: false, beatTime: 1000, count: 10, bpm: 70), at: 0))
        let skipped = interpreter.interpret(ANTFrames.frame(ANTFrames.page(0, toggle: false, beatTime: 2700, count: 12, bpm: 70), at: 2))
        #expect(skipped.samples.filter { $0.type == .rrInterval }.isEmpty)
        let heartRate = try #require(skipped.samples.first { $0.type == .heartRate })
        #expect(heartRate.metadata.sensorLocation == .chest)
    }

    @Test("pages 2, 3 and 7 describe the strap once its toggle bit proves the pages real")
    func antDevicePages() throws {
        var interpreter = FrameInterpreter()
        var offset = 0.0
        func send(_ data: [UInt8]) -> Interpretation {
            offset += 0.25
            return interpreter.interpret(ANTFrames.frame(data, at: offset))
        }
        for toggle in [false, false, false, false, true] {
            _ = send(ANTFrames.page(4, toggle: toggle, 0xFF, 0, 0, beatTime: 0, count: 0, bpm: 65))
        }
        _ = send(ANTFrames.page(2, toggle: true, 123, 0x02, 0x01, beatTime: 0, count: 0, bpm: 65))
        _ = send(ANTFrames.page(3, toggle: true, 5, 7, 9, beatTime: 0, count: 0, bpm: 65))
        _ = send(ANTFrames.page(7, toggle: true, 88, 0x80, 0x23, beatTime: 0, count: 0, bpm: 65))
        let result = send(ANTFrames.page(4, toggle: true, 0xFF, 0, 0, beatTime: 923, count: 1, bpm: 65))
        let device = try #require(result.samples.first?.device)
        #expect(device.manufacturer == "Polar Electro")
        #expect(device.name == "ANT+ heart-rate strap \(UInt32(0x0102) << 16 | 0x1092)")
        #expect(device.hardwareVersion == "5" && device.softwareVersion == "7" && device.model == "9")
        #expect(interpreter.profiles[ANTFrames.strap]?.battery == 88)
    }

    @Test("bytes that are not an ANT message are a counted skip")
    func antMalformed() {
        var interpreter = FrameInterpreter()
        let frame = SensorFrame(time: Frames.base, transport: .ant, device: ANTFrames.strap, kind: .notify, value: [0xA4, 0x09, 0x4E, 0x00])
        let result = interpreter.interpret(frame)
        #expect(result.samples.isEmpty)
        #expect(result.skips.count == 1)
        #expect(result.skips.first?.category == "malformed frame")
    }

    @Test("serial lines: heart rate, RR in milliseconds, battery; bad lines are skipped")
    func serialLines() throws {
        var interpreter = FrameInterpreter()
        let device = SensorID("serial-ttyACM0")
        func line(_ text: String) -> Interpretation {
            interpreter.interpret(SensorFrame(time: Frames.base, transport: .serial, device: device, kind: .notify, value: Array(text.utf8)))
        }
        let result = line("HR 72 RR 812 790 BATT 61")
        #expect(try result.samples.filter { $0.type == .heartRate }.map { try $0.quantity.doubleValue(for: .countPerMinute) } == [72])
        let rr = result.samples.filter { $0.type == .rrInterval }.sorted { $0.start < $1.start }
        #expect(try rr.map { try $0.quantity.doubleValue(for: .millisecond).rounded() } == [812, 790])
        #expect(rr.last?.end == Frames.base)
        #expect(interpreter.profiles[device]?.battery == 61)
        #expect(line("# hello").samples.isEmpty && line("# hello").skips.isEmpty)
        let bad = line("HR banana")
        #expect(bad.samples.isEmpty && bad.skips.first?.category == "malformed frame")
    }
}
