@testable import CentralStore
import HealthModel
import PostgresClient
import Testing

@Suite("A gateway's batches in the central store")
struct CentralGatewayTests {
    @Test("a batch is stored once, with its cursor; sending it again is refused and changes nothing")
    func exactlyOnce() async throws {
        let fixture = try await CentralFixture()
        let gateway = try fixture.gateway("room1", as: "hrmd_owner")
        let samples = try Samples.run(count: 10, anchor: 1, first: Samples.base)
        let batch = SyncBatch(type: .heartRate, from: 0, to: 10, added: samples, deleted: [])
        #expect(try gateway.apply(batch) == SyncOutcome(stored: 10))
        #expect(try gateway.cursor(of: .heartRate) == 10)
        #expect {
            try gateway.apply(batch)
        } throws: { error in
            guard case CentralStoreError.cursorMoved(_, 0, 10) = error else { return false }
            return true
        }
        // A new gateway object (a restarted hrmd) reads the cursor and goes on from it.
        let restarted = try fixture.gateway("room1", as: "hrmd_owner")
        #expect(try restarted.cursor(of: .heartRate) == 10)
        let next = try Samples.run(count: 5, anchor: 11, first: Samples.base + 2_500_000)
        #expect(try restarted.apply(SyncBatch(type: .heartRate, from: 10, to: 15, added: next, deleted: [])).stored == 5)
        #expect(try fixture.count("SELECT count(*) FROM hrmd.samples") == 15)
        #expect(try fixture.count("SELECT count(*) FROM hrmd.chunk") == 1)
        let values = try fixture.rows("SELECT vals FROM hrmd.chunk").doubleElements(0, 0)
        #expect(values == (samples + next).map(\.sample.canonicalValue))
    }

    @Test("chunks hold at most 1024 samples of one UTC hour, and their summaries are right")
    func chunkBounds() async throws {
        let fixture = try await CentralFixture()
        let gateway = try fixture.gateway("room1", as: "hrmd_owner")
        let hourStart = (Samples.base / 3_600_000_000 + 1) * 3_600_000_000
        // 3000 samples at 4 Hz from 100 s before an hour's end.
        let samples = try Samples.run(count: 3000, anchor: 1, first: hourStart - 100_000_000)
        _ = try gateway.apply(SyncBatch(type: .heartRate, from: 0, to: 3000, added: Array(samples[..<1500]), deleted: []))
        _ = try gateway.apply(SyncBatch(type: .heartRate, from: 3000, to: 6000, added: Array(samples[1500...]), deleted: []))
        let chunks = try fixture.rows("SELECT count, first_start, last_start, minimum, maximum, sum, array_length(vals, 1) FROM hrmd.chunk ORDER BY first_start")
        var total = 0
        for row in 0..<chunks.rowCount {
            let count = try chunks.int(row, 0)
            #expect(count <= CentralSchema.chunkCapacity)
            #expect(try chunks.int(row, 6) == count)
            #expect(ChunkRuns.hourOf(try chunks.int64(row, 1)) == ChunkRuns.hourOf(try chunks.int64(row, 2)))
            total += count
        }
        #expect(total == 3000)
        #expect(chunks.rowCount == 4)  // 400 before the hour, then 1024 + 1024 + 552
        let sums = try fixture.rows("SELECT sum(sum), min(minimum), max(maximum) FROM hrmd.chunk")
        #expect(try sums.double(0, 0) == samples.map(\.sample.canonicalValue).reduce(0, +))
        #expect(try sums.double(0, 1) == 60)
        #expect(try sums.double(0, 2) == 149)
    }

    @Test("a beat two gateways heard (ANT+ broadcast) and a recording both replayed are stored once")
    func identityAcrossGateways() async throws {
        let fixture = try await CentralFixture()
        try fixture.createSchema()
        let room1 = try fixture.gateway("room1", as: "gw1")
        let room2 = try fixture.gateway("room2", as: "gw2")
        // The same 20 beats of ant:4242, heard 0.3 s later by room2 (and one beat only by room2).
        func beats(_ offset: Int64, anchor: Int64, skip: Int?) throws -> [StoredSample] {
            try (0..<20).filter { $0 != skip }.map { index in
                try Samples.heartRate(
                    anchor + Int64(index), at: Samples.base + Int64(index) * 800_000 + offset, bpm: 75, device: "ant:4242",
                    beat: ANTBeatStamp(count: UInt8(index), eventTime: UInt16(truncatingIfNeeded: 1000 + index * 819)))
            }
        }
        #expect(try room1.apply(SyncBatch(type: .heartRate, from: 0, to: 100, added: beats(0, anchor: 1, skip: 7), deleted: [])).stored == 19)
        let second = try room2.apply(SyncBatch(type: .heartRate, from: 0, to: 100, added: beats(300_000, anchor: 1, skip: nil), deleted: []))
        #expect(second == SyncOutcome(stored: 1, duplicates: 19))
        // The same recording (BLE strap, same times) replayed on both gateways.
        let replay = try Samples.run(count: 50, anchor: 200, first: Samples.base + 60_000_000, device: "C0:FF:EE:00:00:01")
        #expect(try room1.apply(SyncBatch(type: .heartRate, from: 100, to: 300, added: replay, deleted: [])).stored == 50)
        #expect(try room2.apply(SyncBatch(type: .heartRate, from: 100, to: 300, added: replay, deleted: [])).duplicates == 50)
        #expect(try fixture.count("SELECT count(*) FROM hrmd.samples") == 70)
        #expect(try fixture.count("SELECT count(DISTINCT device) FROM hrmd.samples") == 2)
    }

    @Test("a strap that moves from room to room is one device series")
    func movingStrap() async throws {
        let fixture = try await CentralFixture()
        try fixture.createSchema()
        let room1 = try fixture.gateway("room1", as: "gw1")
        let room2 = try fixture.gateway("room2", as: "gw2")
        _ = try room1.apply(SyncBatch(type: .heartRate, from: 0, to: 10, added: try Samples.run(count: 10, anchor: 1, first: Samples.base), deleted: []))
        _ = try room2.apply(SyncBatch(
            type: .heartRate, from: 0, to: 10, added: try Samples.run(count: 10, anchor: 1, first: Samples.base + 600_000_000), deleted: []))
        #expect(try fixture.count("SELECT count(*) FROM hrmd.device") == 1)
        #expect(try fixture.count("SELECT count(DISTINCT gateway) FROM hrmd.samples WHERE device = 'AA:BB:CC:DD:EE:01'") == 2)
    }

    @Test("a NUL in a device identifier or sync identifier arrives as U+FFFD, not cut short onto another's name")
    func nulInText() async throws {
        let fixture = try await CentralFixture()
        let gateway = try fixture.gateway("room1", as: "hrmd_owner")
        let plain = try Samples.run(count: 2, anchor: 1, first: Samples.base, device: "AA:BB:CC:DD:EE:01")
        let forged = try Samples.run(count: 2, anchor: 3, first: Samples.base + 1_000_000, device: "AA:BB:CC:DD:EE:01\u{0}forged")
        let synced = try Samples.heartRate(5, at: Samples.base - 1_000_000, bpm: 70, syncIdentifier: "session\u{0}1", syncVersion: 1)
        #expect(try gateway.apply(SyncBatch(type: .heartRate, from: 0, to: 5, added: plain + forged + [synced], deleted: [])).stored == 5)
        #expect(try fixture.count("SELECT count(*) FROM hrmd.device") == 2)
        #expect(try fixture.count("SELECT count(*) FROM hrmd.samples WHERE device = 'AA:BB:CC:DD:EE:01\u{FFFD}forged'") == 2)
        #expect(try fixture.count("SELECT count(*) FROM hrmd.samples WHERE sync_identifier = 'session\u{FFFD}1'") == 1)
    }

    @Test("tombstones remove samples and are recorded; sync identifiers keep the highest version")
    func deletionsAndVersions() async throws {
        let fixture = try await CentralFixture()
        try fixture.createSchema()
        let gateway = try fixture.gateway("room1", as: "gw1")
        let samples = try Samples.run(count: 10, anchor: 1, first: Samples.base)
        _ = try gateway.apply(SyncBatch(type: .heartRate, from: 0, to: 10, added: samples, deleted: []))
        let gone = [3, 4, 9].map { DeletedSample(id: Int64($0), type: .heartRate, source: "hrmd", anchor: 10 + Int64($0)) }
        #expect(try gateway.apply(SyncBatch(type: .heartRate, from: 10, to: 20, added: [], deleted: gone)).deleted == 3)
        #expect(try fixture.count("SELECT count(*) FROM hrmd.samples") == 7)
        #expect(try fixture.count("SELECT count(*) FROM hrmd.tombstone") == 3)
        let anchors = try fixture.rows("SELECT anchors FROM hrmd.chunk").int64Elements(0, 0)
        #expect(anchors == [1, 2, 5, 6, 7, 8, 10])
        // Appending after a deletion goes on in the same chunk.
        _ = try gateway.apply(SyncBatch(type: .heartRate, from: 20, to: 21, added: try Samples.run(count: 1, anchor: 21, first: Samples.base + 10_000_000), deleted: []))
        #expect(try fixture.count("SELECT count(*) FROM hrmd.chunk") == 1)

        let v1 = try Samples.heartRate(30, at: Samples.base - 1_000_000, bpm: 80, syncIdentifier: "session-1", syncVersion: 1)
        let v2 = try Samples.heartRate(31, at: Samples.base - 1_000_000, bpm: 82, syncIdentifier: "session-1", syncVersion: 2)
        _ = try gateway.apply(SyncBatch(type: .heartRate, from: 21, to: 31, added: [v2, v1], deleted: []))
        #expect(try fixture.rows("SELECT value FROM hrmd.samples WHERE sync_identifier = 'session-1'").double(0, 0) == 82)
        _ = try gateway.apply(SyncBatch(
            type: .heartRate, from: 31, to: 32, added: [], deleted: [DeletedSample(id: 31, type: .heartRate, source: "hrmd", anchor: 32)]))
        #expect(try fixture.count("SELECT count(*) FROM hrmd.samples WHERE sync_identifier IS NOT NULL") == 0)
    }

    @Test("row-level security: a gateway writes only its own rows, an analyst only reads")
    func rowLevelSecurity() async throws {
        let fixture = try await CentralFixture()
        try fixture.createSchema()
        let room1 = try fixture.gateway("room1", as: "gw1")
        _ = try room1.apply(SyncBatch(type: .heartRate, from: 0, to: 5, added: try Samples.run(count: 5, anchor: 1, first: Samples.base), deleted: []))
        let intruder = try fixture.connect("gw2")
        // No UPDATE or DELETE of its own (and so no lock that would hold readers) ...
        for statement in ["UPDATE hrmd.chunk SET vals = '{1}'", "DELETE FROM hrmd.chunk", "UPDATE hrmd.cursor SET anchor = 0",
                          "LOCK TABLE hrmd.chunk IN ACCESS EXCLUSIVE MODE"] {
            #expect("\(statement)") {
                try intruder.transaction { () throws(PostgresError) in try intruder.execute(statement) }
            } throws: { error in
                guard case PostgresError.server("42501", _, _, _) = error else { return false }
                return true
            }
        }
        // ... and the functions it changes its rows through leave another gateway's alone.
        let chunk = try intruder.execute("SELECT min(id) FROM hrmd.chunk").int64(0, 0)
        try intruder.execute("SELECT hrmd.chunk_drop($1)", [String(chunk)])
        try intruder.execute("SELECT hrmd.chunk_replace($1, '{1}', '{1}', '{1}', NULL, 1, 1, 1, 1, 1, 1, 1, 1)", [String(chunk)])
        try intruder.execute("SELECT hrmd.cursor_move(id, 'heart-rate', 0) FROM hrmd.gateway WHERE name = 'room1'")
        #expect(try room1.cursor(of: .heartRate) == 5)
        #expect(try fixture.count("SELECT count(*) FROM hrmd.chunk WHERE count = 5") == 1)
        #expect(throws: PostgresError.self) {
            try intruder.execute("""
                INSERT INTO hrmd.chunk (gateway_id, type, source_id, first_start, last_start, first_anchor, last_anchor,
                    count, minimum, maximum, sum, starts, vals, anchors)
                SELECT id, 'heart-rate', 1, 0, 0, 0, 0, 1, 1, 1, 1, '{0}', '{1}', '{0}' FROM hrmd.gateway WHERE name = 'room1'
                """)
        }
        // The table owner is held too (FORCE).
        let owner = try fixture.connect("hrmd_owner")
        #expect(try owner.execute("DELETE FROM hrmd.chunk").affectedRows == 0)
        // A name registered to gw1 cannot be taken by gw2.
        #expect {
            _ = try fixture.gateway("room1", as: "gw2")
        } throws: { error in
            guard case CentralStoreError.gatewayTaken("room1", "gw1", "gw2") = error else { return false }
            return true
        }
        let analyst = try fixture.connect("reader")
        #expect(try analyst.execute("SELECT count(*) FROM hrmd.samples").int64(0, 0) == 5)
        #expect(throws: PostgresError.self) { try analyst.execute("DELETE FROM hrmd.chunk") }
        #expect(try fixture.count("SELECT count(*) FROM hrmd.samples") == 5)
    }
}

@Suite("The central schema's set-up")
struct CentralSchemaSetupTests {
    @Test("created once, upgraded from an older version with its data, refused when newer")
    func versions() async throws {
        let fixture = try await CentralFixture()
        let owner = try fixture.connect("hrmd_owner")
        #expect(try CentralSchemaSetup.prepare(owner, migrations: Array(CentralSchema.migrations.prefix(1))) == 1)
        try owner.executeScript("INSERT INTO hrmd.gateway (name) VALUES ('old')")
        #expect(try CentralSchemaSetup.prepare(owner) == CentralSchema.currentVersion)
        #expect(try CentralSchemaSetup.prepare(owner) == CentralSchema.currentVersion)
        #expect(try fixture.count("SELECT count(*) FROM hrmd.migration") == Int64(CentralSchema.currentVersion))
        #expect(try fixture.count("SELECT count(*) FROM hrmd.gateway WHERE name = 'old'") == 1)
        try fixture.server.psql("INSERT INTO hrmd.migration (version, name) VALUES (99, 'future')", database: "hrmd")
        #expect {
            _ = try fixture.gateway("room1", as: "gw1")
        } throws: { error in
            guard case CentralStoreError.schemaNewer(99, CentralSchema.currentVersion) = error else { return false }
            return (error as? CentralStoreError)?.isTransient == false
        }
    }

    @Test("a gateway role may not create or upgrade the schema: one clear line each")
    func roleWithoutRights() async throws {
        let fixture = try await CentralFixture()
        #expect {
            _ = try fixture.gateway("room1", as: "gw1")
        } throws: { error in
            guard case CentralStoreError.schemaMissing(role: "gw1", database: "hrmd") = error else { return false }
            return !"\(error)".contains("\n")
        }
        let owner = try fixture.connect("hrmd_owner")
        try CentralSchemaSetup.prepare(owner, migrations: Array(CentralSchema.migrations.prefix(2)))
        #expect {
            _ = try fixture.gateway("room1", as: "gw1")
        } throws: { error in
            guard case CentralStoreError.schemaOutdated(found: 2, supported: CentralSchema.currentVersion, role: "gw1") = error else { return false }
            return true
        }
    }

    @Test("a database that is not hrmd's is left alone")
    func foreignDatabase() async throws {
        let fixture = try await CentralFixture()
        try fixture.server.psql("CREATE DATABASE payroll OWNER hrmd_owner")
        try fixture.server.psql("CREATE DATABASE other OWNER hrmd_owner")
        try fixture.server.psql("CREATE TABLE public.salaries (who text, amount numeric); ALTER TABLE salaries OWNER TO hrmd_owner", database: "payroll")
        try fixture.server.psql("CREATE SCHEMA hrmd AUTHORIZATION hrmd_owner; CREATE TABLE hrmd.migration (version int)", database: "other")
        for database in ["payroll", "other"] {
            #expect {
                _ = try CentralGateway(connection: fixture.connect("hrmd_owner", database: database), name: "room1")
            } throws: { error in
                guard case CentralStoreError.foreignDatabase(database, _) = error else { return false }
                return true
            }
        }
        #expect(try fixture.server.execute("SELECT count(*) FROM pg_namespace WHERE nspname = 'hrmd'", database: "payroll").int64(0, 0) == 0)
    }
}
