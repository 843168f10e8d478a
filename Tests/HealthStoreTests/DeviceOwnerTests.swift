import Foundation
import GRDB
import HealthUnits
import Testing
import TestSupport
import Timestamps

import HealthModel
@testable import HealthStore

/// Device records belong to the source that wrote them: a source's samples carry only what it
/// said about its devices, however other sources name theirs.
@Suite("Device records per source")
struct DeviceOwnerTests {
    static let app = HealthSource(name: "alice/app")
    static let other = HealthSource(name: "bob/logger")
    /// What an application says of the daemon's strap: its identifier, nothing else.
    static let bare = HealthDevice(localIdentifier: Fixture.strap.localIdentifier)

    static func store() throws -> HealthStore {
        let store = try Fixture.authorizedStore()
        for source in [app, other] {
            try store.setShareAuthorization(.sharingAuthorized, source: source.name, type: .heartRate)
        }
        return store
    }

    /// (source, identifier, name, manufacturer, model) of every device record.
    static func records(_ store: HealthStore) throws -> [[String?]] {
        try store.read { db in
            try Row.fetchAll(db, sql: """
                SELECT src.name, d.localIdentifier, d.name, d.manufacturer, d.model
                FROM device d JOIN source src ON src.id = d.sourceId ORDER BY src.name, d.localIdentifier
                """).map { row in (0..<5).map { row[$0] } }
        }
    }

    /// How many chunks name a device record of another source, or none at all.
    static func misplacedChunks(_ store: HealthStore) throws -> Int {
        try store.read { db in
            try Int.fetchOne(db, sql: """
                SELECT COUNT(*) FROM series s LEFT JOIN device d ON d.id = s.deviceId
                WHERE s.deviceId IS NOT NULL AND (d.id IS NULL OR d.sourceId <> s.sourceId)
                """) ?? -1
        }
    }

    @Test("two sources naming one identifier have a record each, each with what its source said")
    func twoSourcesTwoRecords() throws {
        let store = try Self.store()
        _ = try store.save([try Fixture.heartRate(70, at: 0)], from: Fixture.hrmd)
        let spoof = HealthDevice(localIdentifier: Fixture.strap.localIdentifier, name: "Fake", manufacturer: "Nobody")
        _ = try store.save([try Fixture.heartRate(80, at: 0, device: spoof)], from: Self.app)
        _ = try store.save([try Fixture.heartRate(90, at: 0, device: Self.bare)], from: Self.other)
        let id = Fixture.strap.localIdentifier
        #expect(try Self.records(store) == [
            ["alice/app", id, "Fake", "Nobody", nil], ["bob/logger", id, nil, nil, nil], ["hrmd", id, "Polar H10", "Polar", nil],
        ])
        #expect(try Self.misplacedChunks(store) == 0)
        // One instant of one identifier from three sources: three samples.
        #expect(try store.samples(SampleQuery(type: .heartRate)).count == 3)
    }

    @Test("a source's samples carry only its own device details, whoever reads them")
    func samplesCarryOwnDetails() throws {
        let store = try Self.store()
        _ = try store.save(try (0..<5).map { try Fixture.heartRate(70, at: Double($0)) }, from: Fixture.hrmd)
        _ = try store.save([try Fixture.heartRate(80, at: 0, device: Self.bare)], from: Self.app)
        let unknown = HealthDevice(localIdentifier: "mock-9")
        _ = try store.save([try Fixture.heartRate(81, at: 1, device: unknown)], from: Self.app)

        for reader in [Self.app.name, nil] {
            let own = try store.samples(SampleQuery(type: .heartRate, source: Self.app.name, reader: reader))
            #expect(own.map(\.sample.device) == [Self.bare, unknown], "read by \(reader ?? "the owner")")
        }
        let daemon = try store.samples(SampleQuery(type: .heartRate, source: Fixture.hrmd.name))
        #expect(daemon.count == 5 && daemon.allSatisfy { $0.sample.device == Fixture.strap })

        // Without read authorization the app's device filter finds its own samples only; with it
        // every source's samples of the identifier, each with its own source's record.
        let filtered = SampleQuery(type: .heartRate, device: Fixture.strap.localIdentifier, reader: Self.app.name)
        #expect(try store.samples(filtered).map(\.sample.device) == [Self.bare])
        try store.setReadAuthorization(.sharingAuthorized, source: Self.app.name, type: .heartRate)
        let both = try store.samples(filtered)
        #expect(both.count == 6)
        #expect(both.allSatisfy { $0.sample.device == ($0.source.name == Self.app.name ? Self.bare : Fixture.strap) })

        // A source deletes by its own record of the identifier: the daemon's samples stay.
        #expect(try store.deleteSamples(of: .heartRate, source: Self.app.name, device: Fixture.strap.localIdentifier) == 1)
        #expect(try store.samples(SampleQuery(type: .heartRate, device: Fixture.strap.localIdentifier)).count == 5)
        #expect(try store.deleteSamples(of: .heartRate, source: Self.other.name, device: Fixture.strap.localIdentifier) == 0)
    }

    @Test("the owner's inventory lists an identifier once, with the daemon's details and every source's samples")
    func inventoryMergesByIdentifier() throws {
        // The app's source and record come first (lower ids than hrmd's), its sample last.
        let store = try Fixture.memoryStore()
        for source in [Self.app, Fixture.hrmd] {
            try store.setShareAuthorization(.sharingAuthorized, source: source.name, type: .heartRate)
        }
        let spoof = HealthDevice(localIdentifier: Fixture.strap.localIdentifier, name: "Fake", manufacturer: "Nobody")
        _ = try store.save([try Fixture.heartRate(80, at: 100, device: spoof)], from: Self.app)
        let located = SampleMetadata(sensorLocation: .wrist)
        _ = try store.save(try (0..<5).map { try Fixture.heartRate(70, at: Double($0), metadata: located) }, from: Fixture.hrmd)
        _ = try store.save([try Fixture.heartRate(81, at: 3, device: HealthDevice(localIdentifier: "app-only", model: "M"))], from: Self.app)

        let summaries = try store.deviceSummaries()
        #expect(summaries.map(\.device.localIdentifier) == [Fixture.strap.localIdentifier, "app-only"])
        let strap = try #require(summaries.first)
        #expect(strap.device == Fixture.strap)
        #expect(strap.sampleCount == 6)
        #expect(strap.lastSeen == Fixture.base.advanced(bySeconds: 100))
        #expect(strap.lastLocation == nil)  // the latest sample, the app's, has none
        #expect(summaries.last?.device.model == "M")
    }

    @Test("the write cache keeps each source's record apart across saves")
    func writeCacheAcrossSources() throws {
        let directory = try TemporaryDirectory()
        let store = try HealthStore.open(path: directory.file("store.sqlite"), mode: .createIfMissing)
        for source in [Fixture.hrmd, Self.app] {
            try store.setShareAuthorization(.sharingAuthorized, source: source.name, type: .heartRate)
        }
        // Saves alternate on one store, so each finds the other's device in the cache.
        for second in 0..<4 {
            _ = try store.save([try Fixture.heartRate(70, at: Double(second))], from: Fixture.hrmd)
            _ = try store.save([try Fixture.heartRate(80, at: Double(second), device: Self.bare)], from: Self.app)
        }
        let richer = HealthDevice(localIdentifier: Fixture.strap.localIdentifier, model: "App model")
        _ = try store.save([try Fixture.heartRate(80, at: 4, device: richer)], from: Self.app)
        _ = try store.save([try Fixture.heartRate(70, at: 4)], from: Fixture.hrmd)
        _ = try store.save([try Fixture.heartRate(80, at: 5, device: Self.bare)], from: Self.app)

        let id = Fixture.strap.localIdentifier
        #expect(try Self.records(store) == [["alice/app", id, nil, nil, "App model"], ["hrmd", id, "Polar H10", "Polar", nil]])
        #expect(try Self.misplacedChunks(store) == 0)
        let app = try store.samples(SampleQuery(type: .heartRate, source: Self.app.name))
        #expect(app.count == 6 && app.allSatisfy { $0.sample.device == richer })
        let daemon = try store.samples(SampleQuery(type: .heartRate, source: Fixture.hrmd.name))
        #expect(daemon.count == 5 && daemon.allSatisfy { $0.sample.device == Fixture.strap })
        // Saving again changes nothing: each source's identities are found under its record.
        #expect(try store.save([try Fixture.heartRate(80, at: 0, device: Self.bare)], from: Self.app).unchanged == 1)
        #expect(try store.save([try Fixture.heartRate(70, at: 0)], from: Fixture.hrmd).unchanged == 1)

        // A device equal to the one the daemon's save just wrote still goes to the app's record.
        _ = try store.save([try Fixture.heartRate(70, at: 6)], from: Fixture.hrmd)
        _ = try store.save([try Fixture.heartRate(80, at: 6, device: Fixture.strap)], from: Self.app)
        #expect(try Self.misplacedChunks(store) == 0)
        #expect(try Self.records(store) == [["alice/app", id, "Polar H10", "Polar", "App model"], ["hrmd", id, "Polar H10", "Polar", nil]])
    }
}

/// Migration v8 on stores written before it: records go to the sources whose samples use them.
@Suite("Device owners upgrade")
struct DeviceOwnersUpgradeTests {
    static let time = Fixture.base.microsecondsSinceEpoch

    /// A store in the schema before series (`v5`) with `sources` (id, name), `devices` (id,
    /// identifier, name, manufacturer) and `samples` (id, source id, device id, seconds after
    /// `base`), every source granted heart rate; upgraded to the current schema.
    static func upgradedStore(
        sources: [(Int, String)], devices: [(Int, String, String?, String?)], samples: [(Int, Int, Int?, Int)]
    ) throws -> DatabaseQueue {
        let queue = try DatabaseQueue()
        try Schema.migrator.migrate(queue, upTo: Schema.authorizationRequests)
        try queue.write { db in
            try Schema.registerTypes(db)
            for (id, name) in sources {
                try db.execute(sql: "INSERT INTO source (id, name) VALUES (?, ?)", arguments: [id, name])
                try db.execute(sql: "INSERT INTO authorization (sourceId, typeId, shareStatus) VALUES (?, 1, 2)", arguments: [id])
            }
            for (id, identifier, name, manufacturer) in devices {
                try db.execute(
                    sql: "INSERT INTO device (id, localIdentifier, name, manufacturer) VALUES (?, ?, ?, ?)",
                    arguments: [id, identifier, name, manufacturer])
            }
            for (id, source, device, second) in samples {
                let start = time + Int64(second) * 1_000_000
                try db.execute(
                    sql: #"INSERT INTO sample (id, typeId, sourceId, deviceId, start, "end", value) VALUES (?, 1, ?, ?, ?, ?, ?)"#,
                    arguments: [id, source, device, start, start, 60 + id])
            }
            try db.execute(sql: "UPDATE anchorSequence SET lastAnchor = (SELECT MAX(id) FROM sample)")
        }
        try Schema.migrator.migrate(queue)
        return queue
    }

    /// (id, source id, identifier, name, manufacturer) of every device record, by id.
    static func records(_ queue: DatabaseQueue) throws -> [[String?]] {
        try queue.read { db in
            try Row.fetchAll(db, sql: """
                SELECT CAST(id AS TEXT), CAST(sourceId AS TEXT), localIdentifier, name, manufacturer FROM device ORDER BY id
                """).map { row in (0..<5).map { row[$0] } }
        }
    }

    @Test("each record goes to the source using it; a shared one stays with hrmd and the others get the identifier alone")
    func movesRecords() throws {
        let queue = try Self.upgradedStore(
            sources: [(1, "alice/app"), (2, "hrmd"), (3, "bob/logger")],
            devices: [
                (1, "strap", "Polar H10", "Polar"),  // hrmd, alice and bob: stays with hrmd
                (2, "shared", "Watch", "Acme"),  // bob and alice: stays with alice (lowest id)
                (3, "bob-only", "Band", nil),  // bob alone
                (4, "unused", "Old strap", nil),  // no samples: hrmd's
            ],
            samples: [
                (1, 2, 1, 0), (2, 2, 1, 1), (3, 1, 1, 0), (4, 3, 1, 0), (5, 3, 2, 2), (6, 1, 2, 2), (7, 3, 3, 3),
                (8, 1, nil, 4),
            ])
        #expect(try Self.records(queue) == [
            ["1", "2", "strap", "Polar H10", "Polar"], ["2", "1", "shared", "Watch", "Acme"], ["3", "3", "bob-only", "Band", nil],
            ["4", "2", "unused", "Old strap", nil],
            ["5", "1", "strap", nil, nil], ["6", "3", "strap", nil, nil], ["7", "3", "shared", nil, nil],
        ])
        #expect(try queue.read { try $0.tableExists("deviceOwned") || $0.tableExists("deviceMove") } == false)
        #expect(try queue.read { db in try db.indexes(on: "device").contains { $0.name == "deviceByIdentifier" } })

        let store = try HealthStore(writer: queue)
        let samples = try store.samples(SampleQuery(type: .heartRate))
        // Ids and values as they were; each sample with its own source's record.
        #expect(samples.map(\.id) == [1, 3, 4, 2, 5, 6, 7, 8])
        #expect(samples.map { "\($0.source.name) \($0.sample.device?.localIdentifier ?? "-") \($0.sample.device?.name ?? "-")" } == [
            "hrmd strap Polar H10", "alice/app strap -", "bob/logger strap -", "hrmd strap Polar H10",
            "bob/logger shared -", "alice/app shared Watch", "bob/logger bob-only Band", "alice/app - -",
        ])
        #expect(try DeviceOwnerTests.misplacedChunks(store) == 0)

        // Saving the same samples again changes nothing: every identity is found under its source's record.
        for (name, device) in [("alice/app", "strap"), ("bob/logger", "strap"), ("hrmd", "strap"), ("bob/logger", "shared")] {
            let sample = try #require(samples.first { $0.source.name == name && $0.sample.device?.localIdentifier == device })
            #expect(try store.save([sample.sample], from: HealthSource(name: name)).unchanged == 1, "\(name) \(device)")
        }
        // The owner's inventory: one entry per identifier, counts over every source.
        let inventory = try store.deviceSummaries()
        #expect(inventory.map(\.device.localIdentifier) == ["bob-only", "shared", "strap", "unused"])
        #expect(inventory.map(\.sampleCount) == [1, 2, 4, 0])
        #expect(inventory.map(\.device.name) == ["Band", "Watch", "Polar H10", "Old strap"])
    }

    @Test("without an hrmd source, a record no sample uses is dropped")
    func dropsUnusedWithoutDaemon() throws {
        let queue = try Self.upgradedStore(
            sources: [(1, "alice/app"), (2, "bob/logger")],
            devices: [(1, "unused", "Old strap", nil), (2, "shared", "Watch", "Acme"), (3, "also-unused", nil, nil)],
            samples: [(1, 2, 2, 0), (2, 1, 2, 1)])
        #expect(try Self.records(queue) == [["2", "1", "shared", "Watch", "Acme"], ["3", "2", "shared", nil, nil]])
        let store = try HealthStore(writer: queue)
        #expect(try store.samples(SampleQuery(type: .heartRate)).map(\.sample.device?.name) == [nil, "Watch"])
    }

    @Test("the first schema's file upgrades: its strap stays hrmd's, with its details")
    func firstSchemaFile() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("v1.sqlite")
        try Fixture.writeFirstSchemaStore(at: path)
        let store = try HealthStore.open(path: path, mode: .createIfMissing)
        let samples = try store.samples(SampleQuery(type: .heartRate))
        #expect(samples.map(\.sample.device) == [HealthDevice(localIdentifier: Fixture.strap.localIdentifier, name: "old strap")])
        #expect(try store.read { db in try Int.fetchOne(db, sql: "SELECT sourceId FROM device") } == 1)
    }
}
