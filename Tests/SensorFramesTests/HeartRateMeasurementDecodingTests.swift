import SensorFrames
import Testing

@Suite("Heart Rate Measurement (0x2A37) decoding")
struct HeartRateMeasurementDecodingTests {
    /// Contact state by the value of flags bits 1–2, straight from the specification's table.
    static let contactByBits: [SensorContact] = [.unsupported, .unsupported, .notDetected, .detected]

    @Test(
        "every combination of flag bits 0–4 decodes; reserved bits 5–7 are ignored",
        arguments: 0..<32, [0x00, 0x20, 0x40, 0x80, 0xE0] as [UInt8])
    func everyFlagCombination(lowBits: Int, reserved: UInt8) throws {
        let wide = lowBits & 0x01 != 0
        let hasEnergy = lowBits & 0x08 != 0
        let hasRR = lowBits & 0x10 != 0
        // The frame is written out field by field here, independently of the encoder.
        var frame: [UInt8] = [UInt8(lowBits) | reserved]
        frame += wide ? [0x50, 0x01] : [0x9C]  // 336 or 156 bpm
        if hasEnergy { frame += [0x34, 0x12] }  // 0x1234 = 4660 kJ
        if hasRR { frame += [0x00, 0x04, 0x21, 0x03] }  // 1024 (1 s), then 0x0321 = 801

        let measurement = try HeartRateMeasurement(decoding: frame)
        #expect(measurement.heartRate == (wide ? 336 : 156))
        #expect(measurement.sensorContact == Self.contactByBits[(lowBits >> 1) & 0b11])
        #expect(measurement.energyExpended == (hasEnergy ? 4660 : nil))
        #expect(measurement.rrIntervals == (hasRR ? [1024, 801] : []))

        // Re-encoding gives the same bytes whenever the frame was canonical: reserved bits clear
        // and not contact bits 0b01 (which mean "unsupported" and re-encode as 0b00).
        if reserved == 0, (lowBits >> 1) & 0b11 != 0b01 {
            #expect(measurement.encoded(format: wide ? .uint16 : .uint8) == frame)
        }
    }

    @Test(
        "the three contact states, and 0b01 read as unsupported",
        arguments: [
            (0b000, SensorContact.unsupported), (0b010, .unsupported), (0b100, .notDetected), (0b110, .detected),
        ] as [(UInt8, SensorContact)])
    func contactStates(bits: UInt8, expected: SensorContact) throws {
        #expect(try HeartRateMeasurement(decoding: [bits, 70]).sensorContact == expected)
        #expect(SensorContact(flags: bits | 0b1111_1001) == expected)  // other bits do not matter
    }

    @Test(
        "uint8 heart rate values",
        arguments: [0, 1, 60, 127, 128, 200, 255] as [UInt8])
    func uint8HeartRate(value: UInt8) throws {
        #expect(try HeartRateMeasurement(decoding: [0x00, value]).heartRate == UInt16(value))
    }

    @Test(
        "uint16 heart rate values are little-endian",
        arguments: [0x0000, 0x0048, 0x00FF, 0x0100, 0x012C, 0x1234, 0xFFFF] as [UInt16])
    func uint16HeartRate(value: UInt16) throws {
        #expect(try HeartRateMeasurement(decoding: [0x01] + le(value)).heartRate == value)
    }

    @Test("a small value in uint16 format equals the same value in uint8 format")
    func sameValueBothFormats() throws {
        let narrow = try HeartRateMeasurement(decoding: [0x06, 72])
        let wide = try HeartRateMeasurement(decoding: [0x07, 72, 0x00])
        #expect(narrow == wide)
        #expect(wide.heartRate == 72)
        #expect(try HeartRateMeasurement(decoding: [0x01, 0x34, 0x12]).heartRate == 0x1234)
    }

    @Test("energy expended: present with zero, present with the maximum, absent")
    func energyExpended() throws {
        #expect(try HeartRateMeasurement(decoding: [0x08, 60, 0x00, 0x00]).energyExpended == 0)
        #expect(try HeartRateMeasurement(decoding: [0x08, 60, 0xFF, 0xFF]).energyExpended == 0xFFFF)
        #expect(try HeartRateMeasurement(decoding: [0x09, 0x2C, 0x01, 0x10, 0x27]).energyExpended == 10_000)
        #expect(try HeartRateMeasurement(decoding: [0x00, 60]).energyExpended == nil)
    }

    @Test(
        "any number of RR-intervals, oldest first, with no 20-byte cap",
        arguments: [0, 1, 2, 7, 8, 9, 10, 30, 200], [UInt8(0x00), 0x09, 0x0F])
    func rrIntervalCounts(count: Int, baseFlags: UInt8) throws {
        let intervals = (0..<count).map { UInt16(truncatingIfNeeded: 600 + 37 * $0 + ($0 << 9)) }
        var frame: [UInt8] = [baseFlags | (count > 0 ? 0x10 : 0)]
        frame += baseFlags & 0x01 != 0 ? le(180) : [180]
        if baseFlags & 0x08 != 0 { frame += le(321) }
        for interval in intervals { frame += le(interval) }

        let measurement = try HeartRateMeasurement(decoding: frame)
        #expect(measurement.rrIntervals == intervals)
        #expect(measurement.heartRate == 180)
        #expect(measurement.energyExpended == (baseFlags & 0x08 != 0 ? 321 : nil))
        if count == 30 { #expect(frame.count > 20) }
    }

    @Test("RR-intervals in seconds are raw / 1024")
    func rrIntervalSeconds() throws {
        let measurement = try HeartRateMeasurement(decoding: [0x10, 60, 0x00, 0x04, 0x00, 0x02, 0x21, 0x00, 0, 0])
        #expect(measurement.rrIntervals == [1024, 512, 33, 0])
        #expect(measurement.rrIntervalSeconds == [1.0, 0.5, 0.0322265625, 0])
    }

    @Test("the example of hrmctl decode's help: 1648d2031a04")
    func helpExample() throws {
        let measurement = try HeartRateMeasurement(decoding: try HexBytes.parse("1648d2031a04"))
        #expect(measurement == HeartRateMeasurement(
            heartRate: 72, sensorContact: .detected, energyExpended: nil, rrIntervals: [0x03D2, 0x041A]))
    }

    @Test("decodes slices, non-zero-based indices and non-random-access collections")
    func collectionKinds() throws {
        let expected = HeartRateMeasurement(heartRate: 72, sensorContact: .unsupported, energyExpended: nil, rrIntervals: [1024])
        let buffer: [UInt8] = [0xFF, 0x10, 0x48, 0x00, 0x04, 0xEE]
        #expect(try HeartRateMeasurement(decoding: buffer.dropFirst().dropLast()) == expected)
        // String.UTF8View is a BidirectionalCollection<UInt8>, not random access.
        #expect(try HeartRateMeasurement(decoding: "\u{10}H\u{0}\u{4}".utf8) == expected)
        #expect(throws: GATTDecodingError.oddRRIntervalBytes(1)) {
            try HeartRateMeasurement(decoding: "\u{10}H\u{0}".utf8)
        }
    }

    @Test("without the RR flag, bytes after the last field are ignored (as BlueZ, Nordic and blevalueparser do)")
    func trailingBytesWithoutRRFlag() throws {
        #expect(try HeartRateMeasurement(decoding: [0x00, 72, 0xAB]) == HeartRateMeasurement(
            heartRate: 72, sensorContact: .unsupported, energyExpended: nil, rrIntervals: []))
        #expect(try HeartRateMeasurement(decoding: [0x08, 72, 0x05, 0x00, 0xAB, 0xCD, 0xEF]).energyExpended == 5)
    }
}
