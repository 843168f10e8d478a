import Foundation
import GRDB
import HealthUnits
import TestSupport
import Testing
import Timestamps

import HealthModel
@testable import HealthStore

@Suite("Anchors, tombstones and files")
struct ChangesAndFilesTests {
    @Test("anchored changes list additions, then deletions, and continue from the returned anchor")
    func anchoredChanges() throws {
        let store = try Fixture.authorizedStore()
        _ = try store.save(try (0..<5).map { try Fixture.heartRate(60, at: Double($0)) }, from: Fixture.hrmd)
        let first = try store.changes(of: .heartRate, since: 0)
        #expect(first.added.count == 5 && first.deleted.isEmpty)
        #expect(try store.changes(of: .heartRate, since: first.anchor).added.isEmpty)

        let deleted = try store.deleteSamples(
            of: .heartRate, source: "hrmd", since: Fixture.base, until: Fixture.base.advanced(bySeconds: 2))
        #expect(deleted == 2)
        _ = try store.save([try Fixture.heartRate(61, at: 10)], from: Fixture.hrmd)
        let second = try store.changes(of: .heartRate, since: first.anchor)
        #expect(second.deleted.map(\.id) == first.added.prefix(2).map(\.id))
        #expect(second.added.count == 1)
        #expect(second.anchor > first.anchor)
        // Deletions come before the later addition in change order.
        #expect(second.deleted.allSatisfy { $0.anchor < second.added[0].id })
        #expect(try store.sampleCount(of: .heartRate) == 4)
    }

    @Test("paging with a limit visits every change once")
    func paging() throws {
        let store = try Fixture.authorizedStore()
        _ = try store.save(try (0..<25).map { try Fixture.heartRate(60, at: Double($0)) }, from: Fixture.hrmd)
        try store.deleteSamples(of: .heartRate, source: "hrmd", until: Fixture.base.advanced(bySeconds: 5))
        var anchor: Int64 = 0
        var added = 0, deleted = 0, pages = 0
        while true {
            let page = try store.changes(of: .heartRate, since: anchor, limit: 7)
            if page.added.isEmpty && page.deleted.isEmpty { break }
            added += page.added.count
            deleted += page.deleted.count
            anchor = page.anchor
            pages += 1
            #expect(pages < 20)
        }
        #expect(added == 20 && deleted == 5)
    }

    @Test("a source deletes only its own samples")
    func deleteOnlyOwn() throws {
        let store = try Fixture.authorizedStore()
        let other = HealthSource(name: "importer")
        try store.setShareAuthorization(.sharingAuthorized, source: "importer", type: .heartRate)
        _ = try store.save([try Fixture.heartRate(60, at: 0)], from: Fixture.hrmd)
        _ = try store.save([try Fixture.heartRate(60, at: 0)], from: other)
        #expect(try store.deleteSamples(of: .heartRate, source: "importer") == 1)
        #expect(try store.samples(SampleQuery(type: .heartRate)).map(\.source.name) == ["hrmd"])
    }

    @Test("a file store survives reopening and sees another connection's grant")
    func fileStore() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("hr.sqlite")
        #expect(throws: HealthStoreError.missing(path: path)) { try HealthStore.open(path: path, mode: .existingOnly) }
        let writer = try HealthStore.open(path: path, mode: .createIfMissing)
        let cli = try HealthStore.open(path: path, mode: .existingOnly)
        try cli.setShareAuthorization(.sharingAuthorized, source: "hrmd", type: .heartRate)
        #expect(try writer.save([try Fixture.heartRate(70, at: 0)], from: Fixture.hrmd).stored == 1)
        #expect(try cli.sampleCount(of: .heartRate) == 1)
        let journal = try DatabaseQueue(path: path).read { try String.fetchOne($0, sql: "PRAGMA journal_mode") }
        #expect(journal == "wal")
    }

    @Test("opening fails clearly: missing directory, not a store")
    func openFailures() throws {
        let directory = try TemporaryDirectory()
        #expect {
            try HealthStore.open(path: directory.file("no/such/dir/hr.sqlite"), mode: .createIfMissing)
        } throws: { error in
            guard case .cannotCreate = error as? HealthStoreError else { return false }
            return true
        }
        let garbage = directory.file("garbage.sqlite")
        try Data(repeating: 0x41, count: 4096).write(to: URL(fileURLWithPath: garbage))
        for mode in [HealthStore.OpenMode.existingOnly, .readOnly] {
            #expect {
                try HealthStore.open(path: garbage, mode: mode)
            } throws: { error in
                guard case .cannotOpen(_, let reason) = error as? HealthStoreError else { return false }
                return reason.contains("not an hrmd store")
            }
        }
    }

    @Test("a store written by the first schema opens, upgrades and keeps its samples")
    func upgradeFromV1() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("old.sqlite")
        try Fixture.writeFirstSchemaStore(at: path)
        #expect(try DatabaseQueue(path: path).read { try $0.columns(in: "sample") }.contains { $0.name == "syncIdentifier" } == false)
        let store = try HealthStore.open(path: path, mode: .existingOnly)
        let samples = try store.samples(SampleQuery(type: .heartRate))
        #expect(samples.count == 1)
        #expect(samples.first?.sample.metadata.sensorLocation == .chest)
        #expect(samples.first?.sample.device?.name == "old strap")
        #expect(try store.changes(of: .heartRate, since: 0).added.count == 1)
        // The upgraded store takes sync versions and tombstones.
        let synced = try Fixture.heartRate(70, at: 9, metadata: SampleMetadata(syncIdentifier: "x", syncVersion: 1))
        #expect(try store.save([synced], from: Fixture.hrmd).stored == 1)
        #expect(try store.deleteSamples(of: .heartRate, source: "hrmd") == 2)
    }

    @Test("a store from a newer hrmd is refused, not damaged")
    func newerSchemaRefused() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("newer.sqlite")
        _ = try HealthStore.open(path: path, mode: .createIfMissing)
        try DatabaseQueue(path: path).write { db in
            try db.execute(sql: "INSERT INTO grdb_migrations (identifier) VALUES ('v99-from-the-future')")
        }
        #expect(throws: HealthStoreError.newerSchema(path: path)) { try HealthStore.open(path: path, mode: .existingOnly) }
    }
}
