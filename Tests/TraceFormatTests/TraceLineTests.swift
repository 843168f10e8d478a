import SensorFrames
import Testing
import Timestamps
import TraceFormat

@Suite("hrmd-trace lines")
struct TraceLineTests {
    let time = Timestamp(microsecondsSinceEpoch: 1_795_000_000_123_456)

    @Test("a notification round-trips, with microseconds and lowercase hex")
    func roundTrip() throws {
        let frame = SensorFrame(
            time: time, transport: .ble, device: "AA:BB:CC:DD:EE:FF", kind: .notify,
            characteristic: .heartRateMeasurement, value: [0x16, 0x4A, 0x00, 0x04])
        let line = TraceLine.encode(frame)
        #expect(line == #"{"t":"2026-11-18T11:06:40.123456Z","transport":"ble","device":"AA:BB:CC:DD:EE:FF","kind":"notify","characteristic":"2a37","value":"164a0004"}"#)
        #expect(try TraceLine.decode(line) == frame)
    }

    @Test("lifecycle events carry no value; unknown kinds and keys are kept out of the way")
    func lifecycle() throws {
        let connected = SensorFrame(time: time, transport: .mock, device: "mock-1", kind: .connected)
        #expect(try TraceLine.decode(TraceLine.encode(connected)) == connected)
        let unknown = try TraceLine.decode(#"{"t":"2026-11-18T22:13:20Z","transport":"ant","device":"ant-1","kind":"paired","extra":[1,2]}"#)
        #expect(unknown.kind == .other("paired"))
    }

    @Test("a data frame with an empty value and no characteristic round-trips (found by fuzzing)")
    func emptyDataFrame() throws {
        for kind in [FrameKind.read, .notify] {
            let frame = SensorFrame(time: time, transport: .mock, device: "mock-1", kind: kind)
            #expect(try TraceLine.decode(TraceLine.encode(frame)) == frame)
        }
    }

    @Test("the header is checked")
    func header() throws {
        try TraceLine.decodeHeader(TraceLine.header(details: [("host", "gym")]))
        #expect(throws: TraceError.notATrace) { try TraceLine.decodeHeader(#"{"format":"other"}"#) }
        #expect(throws: TraceError.unsupportedVersion(2)) { try TraceLine.decodeHeader(#"{"format":"hrmd-trace","version":2}"#) }
        #expect(TraceLine.looksLikeTrace(Array(TraceLine.header().utf8)))
        #expect(!TraceLine.looksLikeTrace([0x0E, 0x10, 0x43, 0x08]))
    }

    @Test("bad lines are typed errors", arguments: [
        ("not json", TraceError.malformedJSON),
        (#"{"transport":"ble","device":"x","kind":"notify","value":"00"}"#, .missingKey("t")),
        (#"{"t":"yesterday","transport":"ble","device":"x","kind":"notify","value":"00"}"#, .invalidValue(key: "t", value: "yesterday")),
        (#"{"t":"2026-11-18T22:13:20Z","transport":"wifi","device":"x","kind":"notify","value":"00"}"#, .invalidValue(key: "transport", value: "wifi")),
        (#"{"t":"2026-11-18T22:13:20Z","transport":"ble","device":"x","kind":"notify","characteristic":"2a37","value":"zz"}"#, .invalidValue(key: "value", value: "zz")),
        (#"{"t":"2026-11-18T22:13:20Z","transport":"ble","device":"x","kind":"notify","characteristic":"2a37"}"#, .missingKey("value")),
        (#"{"t":"2026-11-18T22:13:20Z","transport":"ble","device":"","kind":"notify","value":"00"}"#, .invalidValue(key: "device", value: "")),
    ] as [(String, TraceError)])
    func badLines(line: String, error: TraceError) {
        #expect(throws: error) { try TraceLine.decode(line) }
    }

    @Test("the fast scan and the full JSON parser agree: spacing, escapes, numbers, nesting")
    func parsersAgree() throws {
        let spaced = try TraceLine.decode(#"  { "t" : "2026-11-18T11:06:40Z" , "transport":"mock", "device" : "m" , "kind":"connected" }  "#)
        #expect(spaced.device == "m" && spaced.kind == .connected)
        let escaped = try TraceLine.decode(#"{"t":"2026-11-18T11:06:40Z","transport":"mock","device":"strap \"left\" \u00e9","kind":"connected"}"#)
        #expect(escaped.device.rawValue == "strap \"left\" é")
        let nested = try TraceLine.decode(#"{"t":"2026-11-18T11:06:40Z","transport":"mock","device":"m","kind":"notify","characteristic":"2a37","value":"0048","rssi":-60,"extra":{"a":[1]}}"#)
        #expect(nested.value == [0x00, 0x48])
        #expect(throws: TraceError.malformedJSON) { try TraceLine.decode(#"{"t":"x"} trailing"#) }
        #expect(throws: TraceError.missingKey("device")) {
            try TraceLine.decode(#"{"t":"2026-11-18T11:06:40Z","transport":"mock","device":7,"kind":"connected"}"#)
        }
    }
}
