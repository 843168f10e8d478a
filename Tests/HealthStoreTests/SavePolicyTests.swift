import HealthUnits
import Testing

import HealthModel
@testable import HealthStore

@Suite("Saving all or nothing")
struct SavePolicyTests {
    static let app = HealthSource(name: "alice/app")

    func mixedBatch() throws -> [QuantitySample] {
        let rr = try QuantitySample(
            type: .rrInterval, quantity: Quantity(unit: .millisecond, doubleValue: 800),
            start: Fixture.base, end: Fixture.base.advanced(bySeconds: 0.8))
        return [try Fixture.heartRate(60, at: 0), rr, try Fixture.heartRate(61, at: 1)]
    }

    @Test("a batch with a type the source may not share is refused whole, naming the types")
    func refusedWhole() throws {
        let store = try Fixture.memoryStore()
        try store.setShareAuthorization(.sharingAuthorized, source: Self.app.name, type: .heartRate)
        #expect(throws: HealthStoreError.shareNotAuthorized(source: Self.app.name, types: ["rr-interval"])) {
            try store.save(try mixedBatch(), from: Self.app, policy: .refuseUnauthorized)
        }
        #expect(try store.sampleCount(of: .heartRate) == 0)
        #expect(try store.sampleCount(of: .rrInterval) == 0)
        #expect(try store.currentAnchor() == 0)
    }

    @Test("a refused save records no request; the default policy still does")
    func noRequest() throws {
        let store = try Fixture.memoryStore()
        #expect(throws: HealthStoreError.shareNotAuthorized(source: Self.app.name, types: ["heart-rate", "rr-interval"])) {
            try store.save(try mixedBatch(), from: Self.app, policy: .refuseUnauthorized)
        }
        #expect(try store.authorizationAccessEntries().isEmpty)
        #expect(try store.authorizations().isEmpty)
        let report = try store.save(try mixedBatch(), from: Self.app)
        #expect(report.denied == [.heartRate: 2, .rrInterval: 1])
        #expect(try store.authorizationAccessEntries().count == 2)
    }

    @Test("denied counts as refused; an authorized batch saves as usual")
    func deniedAndAuthorized() throws {
        let store = try Fixture.memoryStore()
        try store.setShareAuthorization(.sharingAuthorized, source: Self.app.name, type: .heartRate)
        try store.setShareAuthorization(.sharingDenied, source: Self.app.name, type: .rrInterval)
        #expect(throws: HealthStoreError.shareNotAuthorized(source: Self.app.name, types: ["rr-interval"])) {
            try store.save(try mixedBatch(), from: Self.app, policy: .refuseUnauthorized)
        }
        try store.setShareAuthorization(.sharingAuthorized, source: Self.app.name, type: .rrInterval)
        let report = try store.save(try mixedBatch(), from: Self.app, policy: .refuseUnauthorized)
        #expect(report.stored == 3 && report.denied.isEmpty)
        // A revoke applies to the next save.
        try store.setShareAuthorization(.sharingDenied, source: Self.app.name, type: .heartRate)
        #expect(throws: HealthStoreError.shareNotAuthorized(source: Self.app.name, types: ["heart-rate"])) {
            try store.save([try Fixture.heartRate(62, at: 2)], from: Self.app, policy: .refuseUnauthorized)
        }
        #expect(try store.sampleCount(of: .heartRate) == 2)
    }

    @Test("the refusal is one line that names the source and the types")
    func message() {
        let error = HealthStoreError.shareNotAuthorized(source: "alice/app", types: ["heart-rate", "rr-interval"])
        #expect(error.description == "alice/app may not store heart-rate, rr-interval; nothing was saved")
    }
}
