import SensorFrames
import Testing

@Suite("Body Sensor Location (0x2A38)")
struct BodySensorLocationTests {
    @Test(
        "the seven defined values decode, encode and have their HealthKit names",
        arguments: [
            (0, BodySensorLocation.other, "other"), (1, .chest, "chest"), (2, .wrist, "wrist"), (3, .finger, "finger"),
            (4, .hand, "hand"), (5, .earLobe, "earLobe"), (6, .foot, "foot"),
        ] as [(UInt8, BodySensorLocation, String)])
    func defined(raw: UInt8, location: BodySensorLocation, name: String) throws {
        #expect(try BodySensorLocation(decoding: [raw]) == location)
        #expect(location.encoded() == [raw])
        #expect(location.name == name)
        #expect(BodySensorLocation(name: name) == location)
    }

    @Test("all cases are the seven, in value order")
    func allCases() {
        #expect(BodySensorLocation.allCases.map(\.rawValue) == Array(0...6))
        #expect(BodySensorLocation.allCases.map(\.name) == ["other", "chest", "wrist", "finger", "hand", "earLobe", "foot"])
    }

    @Test("reserved values 7–255 are an error naming the value", arguments: 7...255)
    func reserved(raw: Int) {
        let value = UInt8(raw)
        #expect(throws: GATTDecodingError.reservedSensorLocation(value)) { try BodySensorLocation(decoding: [value]) }
    }

    @Test(
        "any length but one is an error",
        arguments: [[], [0x01, 0x00], [0x01, 0x01, 0x01], [0x09, 0x09]] as [[UInt8]])
    func wrongLength(bytes: [UInt8]) {
        #expect(throws: GATTDecodingError.wrongLength(expected: 1, actual: bytes.count)) {
            try BodySensorLocation(decoding: bytes)
        }
    }

    @Test("a one-byte slice with a non-zero start index decodes")
    func slice() throws {
        let buffer: [UInt8] = [0xFF, 0x05, 0xFF]
        #expect(try BodySensorLocation(decoding: buffer[1..<2]) == .earLobe)
    }

    @Test("names match ignoring case; anything else is not a location", arguments: ["CHEST", "EarLobe", "earlobe", "Foot"])
    func caseInsensitiveNames(name: String) throws {
        let location = try #require(BodySensorLocation(name: name))
        #expect(location.name.lowercased() == name.lowercased())
    }

    @Test("unknown names", arguments: ["", "knee", "ear lobe", "ear_lobe", "chest ", "1"])
    func unknownNames(name: String) {
        #expect(BodySensorLocation(name: name) == nil)
    }

    /// Vectors from eisaev/blevalueparser tests/bodysensorlocationtest.cpp and Nordic
    /// Android-BLE-Common-Library .../callback/hr/BodySensorLocationDataCallbackTest.java.
    /// Same verdicts, except blevalueparser's "Unknown" case: it accepts 0x07 as a valid
    /// "<Unknown>" location; here a reserved value is an error, so no sample is tagged with a
    /// location nobody can name.
    @Test("peer vectors")
    func peerVectors() throws {
        // blevalueparser: Other … Foot are 0x00 … 0x06.
        for (raw, location) in zip(UInt8(0)...6, [BodySensorLocation.other, .chest, .wrist, .finger, .hand, .earLobe, .foot]) {
            #expect(try BodySensorLocation(decoding: [raw]) == location)
        }
        #expect(throws: GATTDecodingError.reservedSensorLocation(7)) { try BodySensorLocation(decoding: [0x07]) }
        // blevalueparser TooShort and Nordic onInvalidDataReceived: no bytes → invalid.
        #expect(throws: GATTDecodingError.wrongLength(expected: 1, actual: 0)) { try BodySensorLocation(decoding: [UInt8]()) }
        // Nordic onBodySensorLocationReceived: SENSOR_LOCATION_EAR_LOBE = 5.
        #expect(try BodySensorLocation(decoding: [5]) == .earLobe)
    }
}
