import HealthUnits
import Testing

import HealthModel
@testable import HealthStore

@Suite("Authorization")
struct AuthorizationTests {
    @Test("a source that never asked is notDetermined and its samples are denied")
    func notDeterminedDenies() throws {
        let store = try Fixture.memoryStore()
        #expect(try store.authorizationStatus(source: "hrmd", type: .heartRate) == .notDetermined)
        let report = try store.save([try Fixture.heartRate(70, at: 0)], from: Fixture.hrmd)
        #expect(report.stored == 0)
        #expect(report.denied == [.heartRate: 1])
        #expect(report.authorization[.heartRate] == .notDetermined)
        #expect(try store.sampleCount(of: .heartRate) == 0)
    }

    @Test("a request is recorded as notDetermined and listed")
    func requestIsRecorded() throws {
        let store = try Fixture.memoryStore()
        let statuses = try store.requestAuthorization(source: "hrmd", toShare: [.heartRate, .rrInterval])
        #expect(statuses == [.heartRate: .notDetermined, .rrInterval: .notDetermined])
        let entries = try store.authorizations()
        #expect(entries.map(\.type) == [.heartRate, .rrInterval])
        #expect(entries.allSatisfy { $0.source == "hrmd" && $0.share == .notDetermined })
    }

    @Test("a grant is kept by a later request")
    func grantSurvivesRequest() throws {
        let store = try Fixture.memoryStore()
        try store.setShareAuthorization(.sharingAuthorized, source: "hrmd", type: .heartRate)
        let statuses = try store.requestAuthorization(source: "hrmd", toShare: [.heartRate])
        #expect(statuses[.heartRate] == .sharingAuthorized)
    }

    @Test("grant stores, revoke applies from the next write, re-grant stores again")
    func revokeAppliesToNextWrite() throws {
        let store = try Fixture.memoryStore()
        try store.setShareAuthorization(.sharingAuthorized, source: "hrmd", type: .heartRate)
        #expect(try store.save([try Fixture.heartRate(70, at: 0)], from: Fixture.hrmd).stored == 1)
        try store.setShareAuthorization(.sharingDenied, source: "hrmd", type: .heartRate)
        let denied = try store.save([try Fixture.heartRate(71, at: 1)], from: Fixture.hrmd)
        #expect(denied.stored == 0 && denied.denied[.heartRate] == 1)
        #expect(denied.authorization[.heartRate] == .sharingDenied)
        try store.setShareAuthorization(.sharingAuthorized, source: "hrmd", type: .heartRate)
        #expect(try store.save([try Fixture.heartRate(72, at: 2)], from: Fixture.hrmd).stored == 1)
        #expect(try store.samples(SampleQuery(type: .heartRate)).map { try $0.sample.quantity.doubleValue(for: .countPerMinute) } == [70, 72])
    }

    @Test("authorization is per type: a mixed batch stores only the authorized type")
    func perTypeAuthorization() throws {
        let store = try Fixture.memoryStore()
        try store.setShareAuthorization(.sharingAuthorized, source: "hrmd", type: .heartRate)
        let rr = try QuantitySample(
            type: .rrInterval, quantity: Quantity(unit: .millisecond, doubleValue: 800),
            start: Fixture.base, end: Fixture.base.advanced(bySeconds: 0.8), device: Fixture.strap)
        let report = try store.save([try Fixture.heartRate(70, at: 0), rr], from: Fixture.hrmd)
        #expect(report.stored == 1)
        #expect(report.denied == [.rrInterval: 1])
    }

    @Test("authorization is per source")
    func perSourceAuthorization() throws {
        let store = try Fixture.memoryStore()
        try store.setShareAuthorization(.sharingAuthorized, source: "hrmd", type: .heartRate)
        let other = HealthSource(name: "other-app")
        #expect(try store.save([try Fixture.heartRate(70, at: 0)], from: other).denied[.heartRate] == 1)
        #expect(try store.authorizationStatus(source: "other-app", type: .heartRate) == .notDetermined)
    }

    @Test("a reader source needs read authorization to see other sources; the owner reads without one")
    func readAuthorization() throws {
        let store = try Fixture.authorizedStore()
        _ = try store.save([try Fixture.heartRate(70, at: 0)], from: Fixture.hrmd)
        #expect(try store.samples(SampleQuery(type: .heartRate, reader: "dashboard")).isEmpty)
        try store.setReadAuthorization(.sharingAuthorized, source: "dashboard", type: .heartRate)
        #expect(try store.samples(SampleQuery(type: .heartRate, reader: "dashboard")).count == 1)
        try store.setReadAuthorization(.sharingDenied, source: "dashboard", type: .heartRate)
        #expect(try store.samples(SampleQuery(type: .heartRate, reader: "dashboard")).isEmpty)
        #expect(try store.samples(SampleQuery(type: .heartRate)).count == 1)
        let entry = try #require(try store.authorizations().first { $0.source == "dashboard" })
        #expect(entry.read == .sharingDenied && entry.share == .notDetermined)
    }
}
