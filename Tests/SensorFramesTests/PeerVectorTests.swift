import SensorFrames
import Testing

/// One input frame from a public peer's test suite and what we make of it.
struct PeerVector: Sendable, CustomTestStringConvertible {
    var name: String
    var bytes: [UInt8]
    var expected: Result<HeartRateMeasurement, GATTDecodingError>
    var testDescription: String { name }

    static func valid(
        _ name: String, _ bytes: [UInt8], heartRate: UInt16, contact: SensorContact = .unsupported,
        energy: UInt16? = nil, rr: [UInt16] = []
    ) -> PeerVector {
        PeerVector(
            name: name, bytes: bytes,
            expected: .success(HeartRateMeasurement(heartRate: heartRate, sensorContact: contact, energyExpended: energy, rrIntervals: rr)))
    }

    static func invalid(_ name: String, _ bytes: [UInt8], _ error: GATTDecodingError) -> PeerVector {
        PeerVector(name: name, bytes: bytes, expected: .failure(error))
    }
}

/// Vectors (input bytes and expected values; facts only) from NordicSemiconductor/
/// Android-BLE-Common-Library, ble-common/src/test/java/no/nordicsemi/android/ble/common/callback/hr/
/// HeartRateMeasurementDataCallbackTest.java (as stored at commit 1c86e44c5d2c).
/// Their `contactDetected == null` is our `.unsupported`, `false` is `.notDetected`, `true` is
/// `.detected`; their `rrIntervals == null` is our empty list.
@Suite("Peer vectors: Nordic Android-BLE-Common-Library")
struct NordicVectorTests {
    static let vectors: [PeerVector] = [
        .valid("simple", [0x00, 85], heartRate: 85),
        .valid("noContact", [0x04, 0xFF], heartRate: 255, contact: .notDetected),
        .valid("uint8", [0b11110, 85, 50, 0, 33, 0], heartRate: 85, contact: .detected, energy: 50, rr: [33]),
        .valid(
            "uint16", [0b11111, 1, 1, 50, 1, 1, 0, 2, 1, 0xFF, 0xFF],
            heartRate: 257, contact: .detected, energy: 306, rr: [1, 258, 65535]),
        // onInvalidDataReceived: uint16 heart rate 257, RR flag set, nothing after it.
        // Nordic: invalid. Same verdict here.
        .invalid("onInvalidDataReceived", [0b10111, 1, 1], .missingRRIntervals),
    ]

    @Test("decodes as Nordic's tests expect", arguments: vectors)
    func decode(vector: PeerVector) {
        #expect(decodeResult(vector.bytes) == vector.expected)
    }

    @Test("the valid Nordic frames are exactly what our encoder writes")
    func encodeMatches() throws {
        for vector in Self.vectors {
            guard case .success(let measurement) = vector.expected else { continue }
            #expect(measurement.encoded() == vector.bytes, "\(vector.name)")
        }
    }

    @Test("the uint8 vector is the documented JSON example: 85 bpm, detected, 50 kJ, 0.0322265625 s")
    func contractExample() throws {
        let measurement = try HeartRateMeasurement(decoding: [0b11110, 85, 50, 0, 33, 0])
        #expect(measurement.rrIntervalSeconds == [0.0322265625])
        #expect(measurement.sensorContact.rawValue == "detected")
    }
}

/// Vectors (input bytes and expected values; facts only) from eisaev/blevalueparser,
/// tests/heartratemeasurementtest.cpp (commit 6180459). That library reports RR-intervals as whole
/// milliseconds (raw * 1000 / 1024, truncated) and the raw values in its "BT spec object";
/// the raw values are used here, the milliseconds are checked separately.
///
/// Where its tests' names promise an RR-interval "to be ignored" (HR8_RR10, HR8_EE_RR9,
/// HR16_RR9, HR16_EE_RR8), their bytes hold no extra interval: they are the same bytes as the
/// vector one interval shorter, so they are not repeated here.
@Suite("Peer vectors: eisaev/blevalueparser")
struct BLEValueParserVectorTests {
    static let rrA1ToA8: [UInt8] = [0xA1, 0x01, 0xA2, 0x01, 0xA3, 0x01, 0xA4, 0x01, 0xA5, 0x01, 0xA6, 0x01, 0xA7, 0x01, 0xA8, 0x01]
    static let raw417To424: [UInt16] = Array(417...424)  // 0x01A1 ... 0x01A8

    static let vectors: [PeerVector] = [
        .valid("ContactsSupportedNotConnected", [0x04, 0xAA], heartRate: 0xAA, contact: .notDetected),
        .valid("ContactsSupportedConnected", [0x06, 0xAA], heartRate: 0xAA, contact: .detected),
        .valid("HR8", [0x00, 0xAA], heartRate: 0xAA),
        .valid("HR16", [0x01, 0xAA, 0x01], heartRate: 0x01AA),
        .valid("HR8_EE", [0x08, 0xAA, 0xBB, 0x01], heartRate: 0xAA, energy: 0x01BB),
        .valid("HR16_EE", [0x09, 0xAA, 0x01, 0xBB, 0x01], heartRate: 0x01AA, energy: 0x01BB),
        .valid("HR8_EE_RR1", [0x18, 0xAA, 0xBB, 0x01, 0xCC, 0x01], heartRate: 0xAA, energy: 0x01BB, rr: [0x01CC]),
        .valid(
            "HR8_RR9",
            [0x10, 0xAA, 0x00, 0x00, 0x01, 0x00, 0x02, 0x00, 0x03, 0x00, 0xF3, 0x03, 0xFC, 0xFF, 0xFD, 0xFF, 0xFE, 0xFF, 0xFF, 0xFF],
            heartRate: 0xAA, rr: [0x0000, 0x0001, 0x0002, 0x0003, 0x03F3, 0xFFFC, 0xFFFD, 0xFFFE, 0xFFFF]),
        .valid(
            "HR8_RR10 (9 intervals in its bytes)", [0x10, 0xAA] + rrA1ToA8 + [0xA9, 0x01],
            heartRate: 0xAA, rr: raw417To424 + [425]),
        .valid("HR8_EE_RR8", [0x18, 0xAA, 0xBB, 0x01] + rrA1ToA8, heartRate: 0xAA, energy: 0x01BB, rr: raw417To424),
        .valid("HR16_RR8", [0x11, 0xAA, 0x01] + rrA1ToA8, heartRate: 0x01AA, rr: raw417To424),
        .valid(
            "HR16_EE_RR7", [0x19, 0xAA, 0x01, 0xBB, 0x01] + rrA1ToA8.dropLast(2),
            heartRate: 0x01AA, energy: 0x01BB, rr: Array(417...423)),
        // TooShort: flags only. blevalueparser: invalid. Same verdict.
        .invalid("TooShort", [0x00], .truncated(field: "heart rate", needed: 1, available: 0)),
        // BrokenPacket: uint16 announced, one byte sent. blevalueparser: invalid. Same verdict.
        .invalid("BrokenPacket", [0x01, 0xAA], .truncated(field: "heart rate", needed: 2, available: 1)),
        // TooLong: 21 bytes, uint16 heart rate, energy and 8 intervals. blevalueparser: INVALID,
        // because it rejects any value over 20 bytes (the default ATT MTU of 23 less 3) and
        // stops after 7 intervals in this layout. DIFFERENT verdict here: every field is whole
        // and in order, and a strap with a larger negotiated MTU may legitimately send it, so
        // we decode all 8 intervals (BlueZ and Nordic have no cap either).
        .valid(
            "TooLong (valid here)", [0x19, 0xAA, 0x01, 0xBB, 0x01] + rrA1ToA8,
            heartRate: 0x01AA, energy: 0x01BB, rr: raw417To424),
    ]

    @Test("decodes as noted for each blevalueparser vector", arguments: vectors)
    func decode(vector: PeerVector) {
        #expect(decodeResult(vector.bytes) == vector.expected)
    }

    @Test("the TooLong vector is over 20 bytes")
    func tooLongIsLong() throws {
        let vector = try #require(Self.vectors.first { $0.name.hasPrefix("TooLong") })
        #expect(vector.bytes.count == 21)
    }

    @Test("its whole-millisecond RR values follow from ours: HR8_RR9")
    func milliseconds() throws {
        let bytes: [UInt8] = [0x10, 0xAA, 0x00, 0x00, 0x01, 0x00, 0x02, 0x00, 0x03, 0x00, 0xF3, 0x03, 0xFC, 0xFF, 0xFD, 0xFF, 0xFE, 0xFF, 0xFF, 0xFF]
        let seconds = try HeartRateMeasurement(decoding: bytes).rrIntervalSeconds
        #expect(seconds.map { Int(($0 * 1000).rounded(.down)) } == [0, 0, 1, 2, 987, 63996, 63997, 63998, 63999])
    }

    @Test("its whole-millisecond RR values follow from ours: 0x01A1... is 407 ms...")
    func millisecondsA1() throws {
        let seconds = try HeartRateMeasurement(decoding: [0x10, 0xAA] + Self.rrA1ToA8).rrIntervalSeconds
        #expect(seconds.map { Int(($0 * 1000).rounded(.down)) } == Array(407...414))
    }
}
