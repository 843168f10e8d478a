import Testing
import Timestamps

import HealthModel
@testable import HealthStore

@Suite("What a reader without read authorization sees")
struct ReaderVisibilityTests {
    static let app = HealthSource(name: "alice/app")
    static let other = HealthSource(name: "bob/logger")

    /// hrmd wrote 70 at 0–9 s, alice/app 80 at 0–4 s, bob/logger 90 at 0–2 s.
    func store() throws -> HealthStore {
        let store = try Fixture.authorizedStore()
        for source in [Self.app, Self.other] {
            try store.setShareAuthorization(.sharingAuthorized, source: source.name, type: .heartRate)
        }
        _ = try store.save(try (0..<10).map { try Fixture.heartRate(70, at: Double($0)) }, from: Fixture.hrmd)
        _ = try store.save(try (0..<5).map { try Fixture.heartRate(80, at: Double($0)) }, from: Self.app)
        _ = try store.save(try (0..<3).map { try Fixture.heartRate(90, at: Double($0)) }, from: Self.other)
        return store
    }

    @Test("samples: only its own without a grant, every source's with one, no error either way")
    func samples() throws {
        let store = try store()
        let own = try store.samples(SampleQuery(type: .heartRate, reader: Self.app.name))
        #expect(own.count == 5 && own.allSatisfy { $0.source.name == Self.app.name })
        try store.setReadAuthorization(.sharingDenied, source: Self.app.name, type: .heartRate)
        #expect(try store.samples(SampleQuery(type: .heartRate, reader: Self.app.name)).count == 5)
        try store.setReadAuthorization(.sharingAuthorized, source: Self.app.name, type: .heartRate)
        #expect(try store.samples(SampleQuery(type: .heartRate, reader: Self.app.name)).count == 18)
        // Read authorization is per type.
        #expect(try store.samples(SampleQuery(type: .rrInterval, reader: Self.app.name)).isEmpty)
    }

    @Test("the store's queries show what the one read rule (ReadScope) admits, for every reader and grant")
    func queriesFollowTheReadRule() throws {
        let store = try store()
        let sources = [Fixture.hrmd.name, Self.app.name, Self.other.name]
        for reader in [Self.app.name, Self.other.name, "nobody/new"] {
            for granted in [false, true] {
                try store.setReadAuthorization(granted ? .sharingAuthorized : .sharingDenied, source: reader, type: .heartRate)
                let seen = Set(try store.samples(SampleQuery(type: .heartRate, reader: reader)).map(\.source.name))
                let scope = ReadScope(reader: reader, mayReadType: granted)
                #expect(seen == Set(sources.filter(scope.admits)), "\(reader), granted: \(granted)")
                let readers: [SampleType: Set<String>] = granted ? [.heartRate: [reader]] : [:]
                #expect(ReadScope(reader: reader, isManager: false, type: .heartRate, readers: readers) == scope)
                #expect(ReadScope.seesSensors(reader: reader, isManager: false, readers: readers) == granted)
            }
        }
        #expect(ReadScope(reader: nil, mayReadType: false) == .everySource, "the owner")
        #expect(ReadScope(reader: Self.app.name, isManager: true, mayReadType: false) == .everySource, "a manager")
        #expect(ReadScope(reader: Self.app.name, mayReadType: false).restrictedTo == Self.app.name)
    }

    @Test("a source filter combines with the restriction: another source gives nothing")
    func sourceFilter() throws {
        let store = try store()
        #expect(try store.samples(SampleQuery(type: .heartRate, source: "hrmd", reader: Self.app.name)).isEmpty)
        #expect(try store.samples(SampleQuery(type: .heartRate, source: Self.app.name, reader: Self.app.name)).count == 5)
        try store.setReadAuthorization(.sharingAuthorized, source: Self.app.name, type: .heartRate)
        #expect(try store.samples(SampleQuery(type: .heartRate, source: "hrmd", reader: Self.app.name)).count == 10)
    }

    @Test("a reader that never wrote sees nothing, the owner sees everything")
    func strangerAndOwner() throws {
        let store = try store()
        #expect(try store.samples(SampleQuery(type: .heartRate, reader: "nobody/new")).isEmpty)
        #expect(try store.samples(SampleQuery(type: .heartRate)).count == 18)
    }

    @Test("statistics count only the reader's own samples without a grant, on rollups and raw samples")
    func statistics() throws {
        let store = try store()
        let since = Fixture.base.advanced(bySeconds: -120), until = Fixture.base.advanced(bySeconds: 600)
        for bucket in [StatisticsBucket.seconds(60), .seconds(1), .days(.gmt)] {
            let own = try store.statistics(of: .heartRate, by: bucket, since: since, until: until, reader: Self.app.name)
            #expect(own.map(\.count).reduce(0, +) == 5, "\(bucket)")
            #expect(own.allSatisfy { $0.minimum == 80 && $0.maximum == 80 }, "\(bucket)")
            #expect(try store.statistics(of: .heartRate, by: bucket, reader: Self.app.name).map(\.count).reduce(0, +) == 5)
            let filtered = try store.statistics(of: .heartRate, by: bucket, source: "hrmd", reader: Self.app.name)
            #expect(filtered.isEmpty, "\(bucket)")
        }
        try store.setReadAuthorization(.sharingAuthorized, source: Self.app.name, type: .heartRate)
        let all = try store.statistics(of: .heartRate, by: .seconds(60), reader: Self.app.name)
        #expect(all.map(\.count).reduce(0, +) == 18)
        #expect(all.map(\.maximum).max() == 90)
    }

    @Test("changes: the reader hears only of its own additions and deletions")
    func changes() throws {
        let store = try store()
        let start = try store.changes(of: .heartRate, since: 0, reader: Self.app.name)
        #expect(start.added.count == 5 && start.added.allSatisfy { $0.source.name == Self.app.name })
        let anchor = start.anchor
        try store.deleteSamples(of: .heartRate, source: "hrmd", until: Fixture.base.advanced(bySeconds: 2))
        try store.deleteSamples(of: .heartRate, source: Self.other.name)
        let afterOthers = try store.changes(of: .heartRate, since: anchor, reader: Self.app.name)
        #expect(afterOthers.added.isEmpty && afterOthers.deleted.isEmpty)
        try store.deleteSamples(of: .heartRate, source: Self.app.name, until: Fixture.base.advanced(bySeconds: 1))
        let afterOwn = try store.changes(of: .heartRate, since: anchor, reader: Self.app.name)
        #expect(afterOwn.deleted.map(\.source) == [Self.app.name])
        // The owner, and a reader with a grant, hear of every deletion.
        #expect(try store.changes(of: .heartRate, since: anchor).deleted.count == 6)
        try store.setReadAuthorization(.sharingAuthorized, source: Self.app.name, type: .heartRate)
        let granted = try store.changes(of: .heartRate, since: anchor, reader: Self.app.name)
        #expect(Set(granted.deleted.map(\.source)) == ["hrmd", Self.other.name, Self.app.name])
    }
}
