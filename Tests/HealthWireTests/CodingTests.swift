import HealthRequests
import HealthModel
import HealthUnits
import HealthWire
import SDBus
import Testing
import Timestamps
import Foundation

@Suite("The store service's wire codings")
struct CodingTests {
    static let stored = StoredSample(
        id: 42, source: HealthSource(name: "mary/runner"),
        sample: try! QuantitySample(
            type: .heartRate, quantity: Quantity(unit: .countPerMinute, doubleValue: 71.5),
            start: Timestamp(microsecondsSinceEpoch: 1_795_000_000_123_456), end: Timestamp(microsecondsSinceEpoch: 1_795_000_000_123_456),
            device: HealthDevice(localIdentifier: "AA:BB:CC:DD:EE:FF", name: "Polar H10", manufacturer: "Polar"),
            metadata: SampleMetadata(sensorLocation: .chest, sensorContact: true, syncIdentifier: "s-1", syncVersion: 3, extra: ["note": "easy run"])))

    @Test("a stored sample survives the dictionary and the JSON line, to the microsecond")
    func sampleRoundTrips() throws {
        let record = SampleRecord(Self.stored)
        #expect(try SampleRecord(wire: record.wireValue) == record)
        let json = try JSONEncoder().encode(record)
        #expect(try JSONDecoder().decode(SampleRecord.self, from: json) == record)
        let back = try record.storedSample()
        #expect(back == Self.stored)
        // The JSON line keeps metadata flat, as the dictionary does.
        let text = String(decoding: json, as: UTF8.self)
        #expect(text.contains("\"note\":\"easy run\"") && text.contains("\"start\":1795000000123456"))
    }

    @Test("a submitted sample is converted to the type's unit and checked")
    func submission() throws {
        let value = WireDictionary.value([
            ("type", .string("heart-rate")), ("start", .int64(1_000_000)), ("value", .double(1.2)), ("unit", .string("count/s")),
            ("device", .string("strap-1")), ("metadata", WireDictionary.value([("sensorLocation", .string("wrist"))])),
        ])
        let sample = try SampleSubmission.sample(from: value, index: 0)
        #expect(abs(sample.canonicalValue - 72) < 1e-9)
        #expect(sample.end == sample.start && sample.device?.localIdentifier == "strap-1" && sample.metadata.sensorLocation == .wrist)
        #expect(try SampleSubmission.sample(from: SampleSubmission.wireValue(sample), index: 0) == sample)
    }

    @Test(
        "bad submissions are one-line reasons naming the sample",
        arguments: [
            ([("type", DBusValue.string("heart-rate")), ("start", .int64(0)), ("value", .double(70)), ("unit", .string("kg"))], "not compatible"),
            ([("type", .string("steps")), ("start", .int64(0)), ("value", .double(70)), ("unit", .string("count/min"))], "unknown type"),
            ([("type", .string("heart-rate")), ("start", .string("now")), ("value", .double(70)), ("unit", .string("count/min"))], "must be an integer"),
            ([("type", .string("heart-rate")), ("start", .int64(10)), ("end", .int64(5)), ("value", .double(70)), ("unit", .string("count/min"))], "before it starts"),
            ([("type", .string("heart-rate")), ("start", .int64(0)), ("value", .double(.nan)), ("unit", .string("count/min"))], "finite"),
            ([("type", .string("heart-rate")), ("start", .int64(0)), ("unit", .string("count/min"))], "'value' is missing"),
            ([("type", .string("heart-rate")), ("start", .int64(0)), ("value", .double(70)), ("unit", .string("count/min")),
              ("metadata", WireDictionary.value([("sensorLocation", .string("knee"))]))], "unknown sensorLocation"),
        ] as [([(String, DBusValue)], String)])
    func badSubmissions(entries: [(String, DBusValue)], reason: String) {
        do {
            _ = try SampleSubmission.sample(from: WireDictionary.value(entries.map { ($0.0, Optional($0.1)) }), index: 3)
            Issue.record("accepted")
        } catch {
            #expect(error.description.hasPrefix("sample 3"))
            #expect(error.description.contains(reason), "\(error)")
            #expect(!error.description.contains("\n"))
        }
    }

    @Test("application names", arguments: [
        ("runner", true), ("a", true), ("my-app.v2_x", true), (String(repeating: "a", count: 64), true),
        ("", false), ("Runner", false), ("-app", false), ("a/b", false), ("hrmd/x", false), (String(repeating: "a", count: 65), false),
        ("ünicode", false),
    ])
    func appNames(name: String, valid: Bool) {
        #expect(((try? AppName.validate(name)) != nil) == valid)
    }

    @Test("ranges: the extremes are no bound, a reversed range is refused")
    func ranges() throws {
        let open = try WireTime.range(since: WireTime.noLowerBound, until: WireTime.noUpperBound)
        #expect(open.since == nil && open.until == nil)
        #expect(throws: WireError.self) { try WireTime.range(since: 10, until: 5) }
        #expect(WireTime.since(nil) == Int64.min && WireTime.until(Timestamp(microsecondsSinceEpoch: 7)) == 7)
    }

    @Test("results: statistics, zones, variability, inventory, authorization entries, imports")
    func results() throws {
        let bucket = StatisticsBucketValue(
            start: Timestamp(microsecondsSinceEpoch: 0), end: Timestamp(microsecondsSinceEpoch: 60_000_000), count: 60,
            minimum: 55, average: 61.5, maximum: 70, sum: 3690)
        #expect(try StatisticsBucketValue(wire: bucket.wireValue) == bucket)
        #expect(bucket.wireValue.signature == StatisticsBucketValue.wireSignature)
        let zone = HeartRateZones.Zone(number: 5, lower: 171, upper: .infinity, seconds: 12.5)
        #expect(try HeartRateZones.Zone(wire: zone.wireValue) == zone)
        let variability = HeartRateVariability(beats: 10, meanNN: 800, sdnn: 20, rmssd: nil)
        #expect(try HeartRateVariability.fromWire(variability.wireValue) == variability)
        #expect(try HeartRateVariability.fromWire(WireDictionary.value([])) == nil)
        let entry = AuthorizationAccessEntry(source: "mary/runner", type: .rrInterval, access: .read, status: .sharingDenied)
        #expect(try AuthorizationAccessEntry(wire: entry.wireValue) == entry)
        let summary = DeviceSummary(
            device: HealthDevice(localIdentifier: "mock-1", name: "m"), sampleCount: 3, lastSeen: Timestamp(microsecondsSinceEpoch: 5),
            lastLocation: .foot)
        #expect(try DeviceSummary(wire: summary.wireValue) == summary)
        let activity = SensorActivity(
            identifier: "mock-1", transport: "mock", state: "streaming", since: Timestamp(microsecondsSinceEpoch: 1), battery: 80,
            frames: 9, updatedAt: Timestamp(microsecondsSinceEpoch: 2))
        #expect(try SensorActivity(wire: activity.wireValue) == activity)
        var imported = RecordingImportSummary()
        imported.frames = 10
        imported.stored = 8
        imported.skipped = ["no contact": 2]
        imported.heartRateShareStatus = .sharingAuthorized
        #expect(try RecordingImportSummary(wire: imported.wireValue) == imported)
        imported.heartRateShareStatus = .notDetermined
        imported.stored = 0
        imported.denied = 3
        let refused = try RecordingImportSummary(wire: imported.wireValue)
        #expect(refused.storedNothingForLackOfAuthorization && !refused.mayShareHeartRate)
    }
}
