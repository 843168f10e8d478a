import HealthUnits
import Testing
import Timestamps

import HealthModel
@testable import HealthStore

@Suite("Saving and querying")
struct SavingTests {
    @Test("a sample round-trips with its source, device and metadata")
    func roundTrip() throws {
        let store = try Fixture.authorizedStore()
        let metadata = SampleMetadata(sensorLocation: .chest, sensorContact: true, extra: ["note": "easy run"])
        let sample = try Fixture.heartRate(72, at: 0.25, metadata: metadata)
        #expect(try store.save([sample], from: Fixture.hrmd).stored == 1)
        let stored = try #require(try store.samples(SampleQuery(type: .heartRate)).first)
        #expect(stored.sample == sample)
        #expect(stored.source == Fixture.hrmd)
        #expect(stored.sample.device?.manufacturer == "Polar")
        #expect(stored.sample.metadata.extra == ["note": "easy run"])
    }

    @Test("values are stored in the canonical unit whatever unit they were given in")
    func canonicalUnit() throws {
        let store = try Fixture.authorizedStore()
        let sample = try QuantitySample(
            type: .heartRate, quantity: Quantity(unit: try HealthUnit(from: "count/s"), doubleValue: 1.5),
            start: Fixture.base, end: Fixture.base, device: Fixture.strap)
        _ = try store.save([sample], from: Fixture.hrmd)
        let stored = try #require(try store.samples(SampleQuery(type: .heartRate)).first)
        #expect(stored.sample.quantity.unit == .countPerMinute)
        #expect(abs(try stored.sample.quantity.doubleValue(for: .countPerMinute) - 90) < 1e-9)
    }

    @Test("a quantity in an incompatible unit is rejected when the sample is made")
    func incompatibleUnit() throws {
        #expect(throws: HealthStoreError.incompatibleUnit(type: "heart-rate", unit: "kg")) {
            try QuantitySample(
                type: .heartRate, quantity: Quantity(unit: .kilogram, doubleValue: 70),
                start: Fixture.base, end: Fixture.base)
        }
    }

    @Test("saving the same identity twice changes nothing")
    func idempotentByIdentity() throws {
        let store = try Fixture.authorizedStore()
        let batch = try (0..<10).map { try Fixture.heartRate(60 + Double($0), at: Double($0)) }
        #expect(try store.save(batch, from: Fixture.hrmd).stored == 10)
        let again = try store.save(batch, from: Fixture.hrmd)
        #expect(again.stored == 0 && again.unchanged == 10)
        // Same identity with another value: still the first one wins.
        let changed = try store.save([try Fixture.heartRate(99, at: 0)], from: Fixture.hrmd)
        #expect(changed.unchanged == 1)
        #expect(try store.sampleCount(of: .heartRate) == 10)
    }

    @Test("identity includes the device: two straps at the same instant are two samples")
    func identityIncludesDevice() throws {
        let store = try Fixture.authorizedStore()
        let other = HealthDevice(localIdentifier: "11:22:33:44:55:66")
        let report = try store.save(
            [try Fixture.heartRate(70, at: 0), try Fixture.heartRate(80, at: 0, device: other), try Fixture.heartRate(90, at: 0, device: nil)],
            from: Fixture.hrmd)
        #expect(report.stored == 3)
        // A sample without a device is deduplicated too.
        #expect(try store.save([try Fixture.heartRate(90, at: 0, device: nil)], from: Fixture.hrmd).unchanged == 1)
    }

    @Test("a higher sync version replaces, an equal or lower one does not")
    func syncVersionReplaces() throws {
        let store = try Fixture.authorizedStore()
        func sample(_ bpm: Double, version: Int, at offset: Double = 0) throws -> QuantitySample {
            try Fixture.heartRate(bpm, at: offset, metadata: SampleMetadata(syncIdentifier: "session-1/0", syncVersion: version))
        }
        #expect(try store.save([try sample(70, version: 1)], from: Fixture.hrmd).stored == 1)
        #expect(try store.save([try sample(71, version: 1)], from: Fixture.hrmd).unchanged == 1)
        #expect(try store.save([try sample(72, version: 0)], from: Fixture.hrmd).unchanged == 1)
        #expect(try store.save([try sample(73, version: 2, at: 5)], from: Fixture.hrmd).replaced == 1)
        let stored = try store.samples(SampleQuery(type: .heartRate))
        #expect(stored.count == 1)
        #expect(try stored[0].sample.quantity.doubleValue(for: .countPerMinute) == 73)
        #expect(stored[0].sample.metadata.syncVersion == 2)
    }

    @Test("device details fill in as they become known and are not erased by later unknowns")
    func deviceDetailsMerge() throws {
        let store = try Fixture.authorizedStore()
        let bare = HealthDevice(localIdentifier: "AA:BB:CC:DD:EE:FF")
        _ = try store.save([try Fixture.heartRate(70, at: 0, device: bare)], from: Fixture.hrmd)
        var known = bare
        known.model = "H10"
        known.firmwareVersion = "5.0"
        _ = try store.save([try Fixture.heartRate(70, at: 1, device: known)], from: Fixture.hrmd)
        _ = try store.save([try Fixture.heartRate(70, at: 2, device: bare)], from: Fixture.hrmd)
        let devices = try store.samples(SampleQuery(type: .heartRate)).compactMap(\.sample.device)
        #expect(devices.allSatisfy { $0.model == "H10" && $0.firmwareVersion == "5.0" })
    }

    @Test("queries filter by range, source and device, order and limit")
    func queries() throws {
        let store = try Fixture.authorizedStore()
        let other = HealthDevice(localIdentifier: "mock-2")
        var batch = try (0..<60).map { try Fixture.heartRate(60, at: Double($0)) }
        batch += try (0..<60).map { try Fixture.heartRate(80, at: Double($0), device: other) }
        _ = try store.save(batch, from: Fixture.hrmd)
        let since = Fixture.base.advanced(bySeconds: 10)
        let until = Fixture.base.advanced(bySeconds: 20)
        #expect(try store.samples(SampleQuery(type: .heartRate, since: since, until: until)).count == 20)
        let one = try store.samples(SampleQuery(type: .heartRate, since: since, until: until, device: "mock-2"))
        #expect(one.count == 10)
        #expect(one.first?.sample.start == since)
        #expect(try store.samples(SampleQuery(type: .heartRate, source: "nobody")).isEmpty)
        let newest = try store.samples(SampleQuery(type: .heartRate, device: "mock-2", limit: 3, newestFirst: true))
        #expect(newest.map(\.sample.start) == [59, 58, 57].map { Fixture.base.advanced(bySeconds: $0) })
        #expect(try store.samples(SampleQuery(type: .rrInterval)).isEmpty)
    }

    @Test("a sample ending before it starts is rejected")
    func invalidInterval() {
        #expect(throws: HealthStoreError.self) {
            try QuantitySample(
                type: .heartRate, quantity: Quantity(unit: .countPerMinute, doubleValue: 60),
                start: Fixture.base, end: Fixture.base.advanced(bySeconds: -1))
        }
    }
}
