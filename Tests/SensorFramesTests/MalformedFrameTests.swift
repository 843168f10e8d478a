import SensorFrames
import Testing

@Suite("Malformed Heart Rate Measurement frames")
struct MalformedFrameTests {
    @Test("an empty value")
    func empty() {
        #expect(throws: GATTDecodingError.empty) { try HeartRateMeasurement(decoding: [UInt8]()) }
    }

    @Test(
        "a heart rate that does not fit",
        arguments: [
            ([0x00], 1, 0),  // uint8 announced, nothing follows
            ([0x01], 2, 0),  // uint16 announced, nothing follows
            ([0x01, 0xAA], 2, 1),  // uint16 announced, one byte follows
            ([0x1F], 2, 0),  // everything announced: the heart rate is checked first
            ([0x19, 0xAA], 2, 1),
            ([0xE0], 1, 0),  // reserved bits alone change nothing
        ] as [([UInt8], Int, Int)])
    func truncatedHeartRate(frame: [UInt8], needed: Int, available: Int) {
        #expect(throws: GATTDecodingError.truncated(field: "heart rate", needed: needed, available: available)) {
            try HeartRateMeasurement(decoding: frame)
        }
    }

    @Test(
        "an energy expended that does not fit",
        arguments: [
            ([0x08, 72], 0),
            ([0x08, 72, 0x01], 1),
            ([0x09, 0x2C, 0x01, 0x01], 1),
            ([0x18, 72, 0x01], 1),  // RR flag too: energy is checked before the RR part
            ([0x1E, 72], 0),
        ] as [([UInt8], Int)])
    func truncatedEnergy(frame: [UInt8], available: Int) {
        #expect(throws: GATTDecodingError.truncated(field: "energy expended", needed: 2, available: available)) {
            try HeartRateMeasurement(decoding: frame)
        }
    }

    /// eisaev/blevalueparser accepts these frames with an empty interval list (its loop just
    /// finds the end); BlueZ and Nordic reject them, and so do we: the field is "one or more".
    @Test(
        "the RR flag with no interval after it",
        arguments: [[0x10, 72], [0x11, 0x2C, 0x01], [0x18, 72, 0x01, 0x00], [0x17, 1, 1], [0xF0, 72]] as [[UInt8]])
    func missingRRIntervals(frame: [UInt8]) {
        #expect(throws: GATTDecodingError.missingRRIntervals) { try HeartRateMeasurement(decoding: frame) }
    }

    /// Nordic's HeartRateMeasurementDataCallback drops the odd last byte and keeps the intervals
    /// before it (count = remaining / 2); BlueZ's process_measurement rejects the frame, and so
    /// does blevalueparser (its last uint16 read runs out of data). We reject it.
    @Test(
        "an odd number of bytes in the RR part",
        arguments: [
            ([0x10, 72, 0x00], 1),
            ([0x10, 72, 0x00, 0x04, 0x01], 3),
            ([0x19, 0x2C, 0x01, 0x05, 0x00, 0x00, 0x04, 0x00, 0x02, 0x01], 5),
            ([0x10, 72] + [UInt8](repeating: 0x03, count: 61), 61),  // beyond 20 bytes too
        ] as [([UInt8], Int)])
    func oddRRBytes(frame: [UInt8], count: Int) {
        #expect(throws: GATTDecodingError.oddRRIntervalBytes(count)) { try HeartRateMeasurement(decoding: frame) }
    }

    @Test("every prefix of a full frame either decodes or names the field that is cut")
    func everyPrefix() {
        // flags 0x19: uint16 heart rate 300, energy 500, RR 1024 and 512.
        let full: [UInt8] = [0x19, 0x2C, 0x01, 0xF4, 0x01, 0x00, 0x04, 0x00, 0x02]
        let expected: [Result<HeartRateMeasurement, GATTDecodingError>] = [
            .failure(.empty),
            .failure(.truncated(field: "heart rate", needed: 2, available: 0)),
            .failure(.truncated(field: "heart rate", needed: 2, available: 1)),
            .failure(.truncated(field: "energy expended", needed: 2, available: 0)),
            .failure(.truncated(field: "energy expended", needed: 2, available: 1)),
            .failure(.missingRRIntervals),
            .failure(.oddRRIntervalBytes(1)),
            .success(HeartRateMeasurement(heartRate: 300, sensorContact: .unsupported, energyExpended: 500, rrIntervals: [1024])),
            .failure(.oddRRIntervalBytes(3)),
            .success(HeartRateMeasurement(heartRate: 300, sensorContact: .unsupported, energyExpended: 500, rrIntervals: [1024, 512])),
        ]
        #expect((0...full.count).map { decodeResult(Array(full.prefix($0))) } == expected)
    }

    @Test(
        "each error describes itself in one line",
        arguments: [
            (GATTDecodingError.empty, "empty value: there is not even a flags byte to decode"),
            (.truncated(field: "energy expended", needed: 2, available: 1),
             "heart rate measurement truncated: energy expended needs 2 bytes, 1 left"),
            (.truncated(field: "heart rate", needed: 1, available: 0),
             "heart rate measurement truncated: heart rate needs 1 byte, 0 left"),
            (.oddRRIntervalBytes(3),
             "heart rate measurement RR-interval field has 3 bytes, not a whole number of 2-byte intervals"),
            (.oddRRIntervalBytes(1),
             "heart rate measurement RR-interval field has 1 byte, not a whole number of 2-byte intervals"),
            (.missingRRIntervals, "heart rate measurement flags announce RR-intervals but no bytes follow"),
            (.reservedSensorLocation(7), "body sensor location 7 is reserved for future use (known: 0 to 6)"),
            (.wrongLength(expected: 1, actual: 2), "wrong length: expected 1 byte, got 2"),
            (.malformedHex("odd number of hex digits (3)"), "malformed hex: odd number of hex digits (3)"),
        ] as [(GATTDecodingError, String)])
    func descriptions(error: GATTDecodingError, expected: String) {
        #expect(error.description == expected)
        #expect("\(error)" == expected)
        #expect(!expected.contains("\n"))
    }

    @Test("a real decode error reads as documented")
    func decodedErrorDescription() {
        #expect(decodeResult([0x08, 72, 0x01]).failureDescription
            == "heart rate measurement truncated: energy expended needs 2 bytes, 1 left")
    }
}

extension Result {
    fileprivate var failureDescription: String? {
        if case .failure(let error) = self { return "\(error)" }
        return nil
    }
}
