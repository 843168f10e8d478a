import GRDB
import TestSupport
import Testing

import HealthModel
@testable import HealthStore

@Suite("Authorization requests, share and read")
struct AuthorizationRequestTests {
    func entries(_ store: HealthStore) throws -> [String] {
        try store.authorizationAccessEntries().map { "\($0.source) \($0.type) \($0.access.rawValue) \($0.status)" }
    }

    @Test("a request lists pending share and read entries and grants nothing")
    func requestIsPending() throws {
        let store = try Fixture.memoryStore()
        try store.requestAuthorization(source: "alice/dash", toShare: [.heartRate], toRead: [.heartRate, .rrInterval])
        #expect(try entries(store) == [
            "alice/dash heart-rate share notDetermined",
            "alice/dash heart-rate read notDetermined",
            "alice/dash rr-interval read notDetermined",
        ])
        #expect(try store.authorizationStatus(source: "alice/dash", type: .heartRate) == .notDetermined)
        #expect(try store.readStatus(source: "alice/dash", type: .heartRate) == .notDetermined)
        // Nothing was granted: the request alone does not let it save or read others' samples.
        #expect(try store.save([try Fixture.heartRate(70, at: 0)], from: HealthSource(name: "alice/dash")).stored == 0)
    }

    @Test("a request never changes an answer, and an answered access is listed with its answer")
    func requestKeepsAnswers() throws {
        let store = try Fixture.memoryStore()
        try store.setShareAuthorization(.sharingDenied, source: "app", type: .heartRate)
        try store.setReadAuthorization(.sharingAuthorized, source: "app", type: .rrInterval)
        try store.requestAuthorization(source: "app", toShare: [.heartRate, .rrInterval], toRead: [.rrInterval])
        #expect(try store.authorizationStatus(source: "app", type: .heartRate) == .sharingDenied)
        #expect(try store.readStatus(source: "app", type: .rrInterval) == .sharingAuthorized)
        #expect(try entries(store) == [
            "app heart-rate share sharingDenied",
            "app rr-interval share notDetermined",
            "app rr-interval read sharingAuthorized",
        ])
    }

    @Test("an access neither requested nor answered is not listed")
    func unrequestedNotListed() throws {
        let store = try Fixture.memoryStore()
        // A read answer makes a row whose share side nobody asked for.
        try store.setReadAuthorization(.sharingDenied, source: "viewer", type: .heartRate)
        #expect(try entries(store) == ["viewer heart-rate read sharingDenied"])
        // Withdrawing an answer that was never requested leaves nothing to list.
        try store.setAuthorization(.notDetermined, for: .read, source: "viewer", type: .heartRate)
        #expect(try entries(store).isEmpty)
        // The old listing still shows the row, as before.
        #expect(try store.authorizations().map(\.source) == ["viewer"])
    }

    @Test("withdrawing the answer to a request shows it pending again")
    func withdrawnAnswerIsPending() throws {
        let store = try Fixture.memoryStore()
        try store.requestAuthorization(source: "app", toShare: [], toRead: [.heartRate])
        try store.setAuthorization(.sharingAuthorized, for: .read, source: "app", type: .heartRate)
        #expect(try entries(store) == ["app heart-rate read sharingAuthorized"])
        try store.setAuthorization(.notDetermined, for: .read, source: "app", type: .heartRate)
        #expect(try entries(store) == ["app heart-rate read notDetermined"])
    }

    @Test("the share-only request and a denied save count as share requests")
    func shareOnlyRequestAndSave() throws {
        let store = try Fixture.memoryStore()
        let statuses = try store.requestAuthorization(source: "hrmd", toShare: [.heartRate])
        #expect(statuses == [.heartRate: .notDetermined])
        _ = try store.save([try Fixture.heartRate(70, at: 0)], from: HealthSource(name: "writer"))
        #expect(try entries(store) == ["hrmd heart-rate share notDetermined", "writer heart-rate share notDetermined"])
        // A save after only a read answer also asks to share.
        try store.setReadAuthorization(.sharingAuthorized, source: "reader", type: .heartRate)
        _ = try store.save([try Fixture.heartRate(70, at: 1)], from: HealthSource(name: "reader"))
        #expect(try entries(store).contains("reader heart-rate share notDetermined"))
    }

    @Test("entries are ordered by source, type, then share before read")
    func ordering() throws {
        let store = try Fixture.memoryStore()
        try store.requestAuthorization(source: "b", toShare: [.rrInterval, .heartRate], toRead: [.rrInterval])
        try store.requestAuthorization(source: "a", toShare: [], toRead: [.activeEnergyBurned])
        #expect(try entries(store) == [
            "a active-energy-burned read notDetermined",
            "b heart-rate share notDetermined",
            "b rr-interval share notDetermined",
            "b rr-interval read notDetermined",
        ])
    }

    @Test("status names round-trip")
    func statusNames() {
        for status in AuthorizationStatus.allCases { #expect(AuthorizationStatus(name: status.description) == status) }
        #expect(AuthorizationStatus(name: "granted") == nil)
    }

    @Test("v5 marks the unanswered share rows of an older store as requested, and keeps answers")
    func migrationMarksRequests() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("v4.sqlite")
        do {
            let old = try DatabaseQueue(path: path)
            try Schema.migrator.migrate(old, upTo: Schema.sensorActivity)
            try old.write { db in
                try Schema.registerTypes(db)
                try db.execute(sql: """
                    INSERT INTO source (id, name) VALUES (1, 'hrmd'), (2, 'granted'), (3, 'denied');
                    INSERT INTO authorization (sourceId, typeId, shareStatus, readStatus) VALUES
                        (1, 1, 0, 0), (2, 1, 2, 2), (3, 1, 1, 0);
                    """)
            }
        }
        let store = try HealthStore.open(path: path, mode: .existingOnly)
        #expect(try entries(store) == [
            "denied heart-rate share sharingDenied",
            "granted heart-rate share sharingAuthorized",
            "granted heart-rate read sharingAuthorized",
            "hrmd heart-rate share notDetermined",
        ])
        #expect(try store.authorizations().count == 3)
    }
}
