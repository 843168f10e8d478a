import TestSupport
import SensorFrames
import Testing

@Suite("Heart Rate Measurement (0x2A37) encoding and round trips")
struct HeartRateMeasurementEncodingTests {
    @Test(
        "the heart-rate format: uint8 when it fits unless uint16 is asked for; uint16 whenever it does not fit",
        arguments: [
            (72, nil, [0x00, 72]),
            (0, nil, [0x00, 0x00]),
            (255, nil, [0x00, 0xFF]),
            (256, nil, [0x01, 0x00, 0x01]),
            (0xFFFF, nil, [0x01, 0xFF, 0xFF]),
            (72, .uint8, [0x00, 72]),
            (72, .uint16, [0x01, 72, 0x00]),
            (255, .uint16, [0x01, 0xFF, 0x00]),
            (300, .uint8, [0x01, 0x2C, 0x01]),  // does not fit in a byte: never truncated
            (300, .uint16, [0x01, 0x2C, 0x01]),
        ] as [(UInt16, HeartRateValueFormat?, [UInt8])])
    func heartRateFormat(heartRate: UInt16, format: HeartRateValueFormat?, expected: [UInt8]) {
        let measurement = HeartRateMeasurement(heartRate: heartRate, sensorContact: .unsupported, energyExpended: nil, rrIntervals: [])
        #expect(measurement.encoded(format: format) == expected)
    }

    @Test(
        "contact states set bits 1–2",
        arguments: [(SensorContact.unsupported, 0x00), (.notDetected, 0x04), (.detected, 0x06)] as [(SensorContact, UInt8)])
    func contactBits(contact: SensorContact, flags: UInt8) {
        let measurement = HeartRateMeasurement(heartRate: 60, sensorContact: contact, energyExpended: nil, rrIntervals: [])
        #expect(measurement.encoded() == [flags, 60])
        #expect(contact.flagBits == flags)
    }

    @Test("energy expended and RR-intervals, little-endian, in field order")
    func optionalFields() {
        #expect(HeartRateMeasurement(heartRate: 60, sensorContact: .unsupported, energyExpended: 0, rrIntervals: []).encoded()
            == [0x08, 60, 0x00, 0x00])
        #expect(HeartRateMeasurement(heartRate: 60, sensorContact: .unsupported, energyExpended: nil, rrIntervals: [0x0102]).encoded()
            == [0x10, 60, 0x02, 0x01])
        #expect(HeartRateMeasurement(heartRate: 0x0150, sensorContact: .detected, energyExpended: 0x1234, rrIntervals: [0x0400, 0xABCD]).encoded()
            == [0x1F, 0x50, 0x01, 0x34, 0x12, 0x00, 0x04, 0xCD, 0xAB])
    }

    @Test("30 RR-intervals are all written: no 20-byte cap")
    func manyRRIntervals() throws {
        let intervals = (0..<30).map { UInt16(700 + $0) }
        let measurement = HeartRateMeasurement(heartRate: 90, sensorContact: .detected, energyExpended: 7, rrIntervals: intervals)
        let bytes = measurement.encoded()
        #expect(bytes.count == 1 + 1 + 2 + 60)
        #expect(bytes[0] == 0x1E)
        #expect(Array(bytes.suffix(2)) == le(729))
        #expect(try HeartRateMeasurement(decoding: bytes) == measurement)
    }

    @Test("the default initializer arguments mean: no contact support, no energy, no intervals")
    func initializerDefaults() {
        let measurement = HeartRateMeasurement(heartRate: 61)
        #expect(measurement.sensorContact == .unsupported)
        #expect(measurement.energyExpended == nil)
        #expect(measurement.rrIntervals.isEmpty)
        #expect(measurement.encoded() == [0x00, 61])
    }

    /// A measurement with every part drawn from `generator`, biased so that small heart rates,
    /// absent fields and empty or long interval lists all come up often.
    static func randomMeasurement(using generator: inout SplitMix64) -> HeartRateMeasurement {
        let heartRate: UInt16 = Bool.random(using: &generator)
            ? UInt16.random(in: 0...255, using: &generator) : UInt16.random(in: 0...UInt16.max, using: &generator)
        let contact = SensorContact.allCases.randomElement(using: &generator)!
        let energy: UInt16? = Bool.random(using: &generator) ? UInt16.random(in: 0...UInt16.max, using: &generator) : nil
        let count = Bool.random(using: &generator) ? 0 : Int.random(in: 1...40, using: &generator)
        let intervals = (0..<count).map { _ in UInt16.random(in: 0...UInt16.max, using: &generator) }
        return HeartRateMeasurement(heartRate: heartRate, sensorContact: contact, energyExpended: energy, rrIntervals: intervals)
    }

    @Test(
        "round trip: decoding what was encoded gives the same measurement",
        arguments: [nil, .uint8, .uint16] as [HeartRateValueFormat?], [1, 2, 3] as [UInt64])
    func roundTrip(format: HeartRateValueFormat?, seed: UInt64) throws {
        var generator = SplitMix64(seed: seed)
        for _ in 0..<1000 {
            let measurement = Self.randomMeasurement(using: &generator)
            let bytes = measurement.encoded(format: format)
            let wide = measurement.heartRate > 255 || format == .uint16
            #expect(bytes.count == 1 + (wide ? 2 : 1) + (measurement.energyExpended == nil ? 0 : 2) + 2 * measurement.rrIntervals.count)
            #expect(bytes[0] & 0xE0 == 0, "reserved bits stay clear")
            #expect(bytes[0] & 0x01 == (wide ? 1 : 0))
            let decoded = try HeartRateMeasurement(decoding: bytes)
            #expect(decoded == measurement, "\(HexBytes.string(bytes))")
            // And the other way: the decoded measurement encodes to the very same bytes.
            #expect(decoded.encoded(format: format) == bytes)
        }
    }

    @Test("the generator really varies what the round trip covers")
    func generatorCoverage() {
        var generator = SplitMix64(seed: 1)
        let sample = (0..<1000).map { _ in Self.randomMeasurement(using: &generator) }
        #expect(Set(sample.map(\.sensorContact)) == Set(SensorContact.allCases))
        #expect(sample.contains { $0.heartRate > 255 } && sample.contains { $0.heartRate <= 255 })
        #expect(sample.contains { $0.energyExpended == nil } && sample.contains { $0.energyExpended != nil })
        #expect(sample.contains { $0.rrIntervals.isEmpty } && sample.contains { $0.rrIntervals.count > 9 })
    }
}
