import Foundation
import HealthModel
import HealthStore
import TestSupport

/// The upgrade of a store written by hrmd's v4 schema, holding 1M heart-rate samples of one
/// strap at 1 Hz: the time `HealthStore.open` takes to bring it to this hrmd's schema. The v4
/// file is written with the sqlite3 shell from the released migrations' SQL (frozen here, as
/// released migrations are), not through the store. No peer: nothing else upgrades this file.
struct UpgradeBenchmark {
    let scratch: BenchScratch
    let count = 1_000_000
    let rounds = 3

    func run() async throws {
        print("upgrade: HealthStore.open of a v4 store with \(count) heart-rate samples (one strap, 1 Hz); median of \(rounds) copies")
        let template = scratch.file("v4.sqlite")
        guard try await writeV4Store(to: template) else { return }
        var times: [Double] = []
        for round in 1...rounds {
            let path = scratch.file("upgrade-\(round).sqlite")
            try FileManager.default.copyItem(atPath: template, toPath: path)
            var store: HealthStore?
            times.append(try measure { store = try HealthStore.open(path: path, mode: .existingOnly) })
            if round == 1, let store {
                var kept = 0
                try store.enumerateSamples(SampleQuery(type: .heartRate)) { _ in kept += 1 }
                precondition(kept == count, "the upgraded store holds \(kept) of \(count) samples")
            }
        }
        let seconds = median(times)
        report("HealthStore.open upgrading the v4 store", duration(seconds), "\(format(Double(count) / seconds / 1e6, 2))M samples/s")
        report("peer", "none", "no other program upgrades this file")
        print("")
    }

    /// The v4 file: the schema of migrations v1-core … v4-sensor-activity recorded as applied
    /// in grdb_migrations, the catalogue, hrmd allowed to share heart rate, then the samples
    /// with their anchors and per-minute rollups as the v4 store kept them. False (reported)
    /// when the sqlite3 shell fails.
    private func writeV4Store(to path: String) async throws -> Bool {
        var data = SeriesBenchmarkData(seed: 4)
        let times = data.arrivals(count: count, periodMs: 1000, jitterMs: 30, driftPPM: 20)
        let rates = data.heartRates(count: count, steadiness: 0.6)
        let csv = scratch.file("v4-rows.csv")
        var text = ""
        text.reserveCapacity(count * 20)
        for (time, rate) in zip(times, rates) { text += "\(time),\(Int(rate))\n" }
        try text.write(toFile: csv, atomically: false, encoding: .utf8)
        let script = scratch.file("v4.sql")
        try """
            PRAGMA journal_mode=WAL;
            \(Self.v4Schema)
            INSERT INTO sampleType (id, identifier, unit, aggregation) VALUES
                (1, 'heart-rate', 'count/min', 'discrete'), (2, 'rr-interval', 'ms', 'discrete'),
                (3, 'active-energy-burned', 'kJ', 'cumulative');
            INSERT INTO source (id, name, version) VALUES (1, 'hrmd', '0.4');
            INSERT INTO device (id, localIdentifier, name) VALUES (1, 'C0:FF:EE:00:00:00', 'bench strap');
            INSERT INTO authorization (sourceId, typeId, shareStatus) VALUES (1, 1, 2);
            CREATE TEMP TABLE incoming (start INTEGER, value REAL);
            .import --csv \(csv) incoming
            BEGIN;
            INSERT INTO sample (id, typeId, sourceId, deviceId, start, "end", value, sensorLocation, sensorContact)
                SELECT rowid, 1, 1, 1, start, start, value, 1, 1 FROM incoming ORDER BY rowid;
            UPDATE anchorSequence SET lastAnchor = (SELECT MAX(id) FROM sample);
            INSERT INTO minuteRollup (typeId, minute, sourceId, count, sum, minimum, maximum)
                SELECT typeId, (start - ((start % 60000000) + 60000000) % 60000000) / 60000000, sourceId,
                    COUNT(*), SUM(value), MIN(value), MAX(value)
                FROM sample GROUP BY 1, 2, 3;
            COMMIT;
            SELECT COUNT(*) FROM sample;
            """.write(toFile: script, atomically: false, encoding: .utf8)
        let child = try ChildProcess("/usr/bin/sqlite3", [path], outputDirectory: scratch.directory.path, stdinPath: script)
        let termination = try await child.wait(timeout: .seconds(600))
        try? FileManager.default.removeItem(atPath: csv)
        guard termination == .exited(0), child.standardOutput.split(separator: "\n").last == "\(count)" else {
            report("v4 store", "not written", "\(termination): \(child.standardError.prefix(300))")
            return false
        }
        return true
    }

    /// The tables of migrations v1-core to v4-sensor-activity as released, in order, and
    /// GRDB's record of them.
    static let v4Schema = """
        CREATE TABLE grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY);
        CREATE TABLE sampleType (
            id INTEGER PRIMARY KEY,
            identifier TEXT NOT NULL UNIQUE,
            unit TEXT NOT NULL,
            aggregation TEXT NOT NULL CHECK (aggregation IN ('discrete', 'cumulative'))
        );
        CREATE TABLE source (
            id INTEGER PRIMARY KEY,
            name TEXT NOT NULL UNIQUE CHECK (name <> ''),
            version TEXT
        );
        CREATE TABLE device (
            id INTEGER PRIMARY KEY,
            localIdentifier TEXT NOT NULL UNIQUE CHECK (localIdentifier <> ''),
            name TEXT,
            manufacturer TEXT,
            model TEXT,
            hardwareVersion TEXT,
            firmwareVersion TEXT,
            softwareVersion TEXT
        );
        CREATE TABLE authorization (
            sourceId INTEGER NOT NULL REFERENCES source(id),
            typeId INTEGER NOT NULL REFERENCES sampleType(id),
            shareStatus INTEGER NOT NULL DEFAULT 0 CHECK (shareStatus IN (0, 1, 2)),
            readStatus INTEGER NOT NULL DEFAULT 0 CHECK (readStatus IN (0, 1, 2)),
            PRIMARY KEY (sourceId, typeId)
        ) WITHOUT ROWID;
        CREATE TABLE sample (
            id INTEGER PRIMARY KEY,
            typeId INTEGER NOT NULL,
            sourceId INTEGER NOT NULL,
            deviceId INTEGER,
            start INTEGER NOT NULL,
            "end" INTEGER NOT NULL CHECK ("end" >= start),
            value REAL NOT NULL,
            sensorLocation INTEGER CHECK (sensorLocation BETWEEN 0 AND 6),
            sensorContact INTEGER CHECK (sensorContact IN (0, 1)),
            metadata TEXT
        );
        CREATE UNIQUE INDEX sampleIdentity ON sample (typeId, start, sourceId, IFNULL(deviceId, 0));
        INSERT INTO grdb_migrations (identifier) VALUES ('v1-core');

        ALTER TABLE sample ADD COLUMN syncIdentifier TEXT;
        ALTER TABLE sample ADD COLUMN syncVersion INTEGER;
        CREATE UNIQUE INDEX sampleSync ON sample (sourceId, syncIdentifier)
            WHERE syncIdentifier IS NOT NULL;
        CREATE TABLE anchorSequence (
            id INTEGER PRIMARY KEY CHECK (id = 1),
            lastAnchor INTEGER NOT NULL
        );
        INSERT INTO anchorSequence (id, lastAnchor) VALUES (1, (SELECT IFNULL(MAX(id), 0) FROM sample));
        CREATE TABLE deletedSample (
            anchor INTEGER PRIMARY KEY,
            sampleId INTEGER NOT NULL,
            typeId INTEGER NOT NULL REFERENCES sampleType(id),
            sourceId INTEGER NOT NULL REFERENCES source(id),
            deletedAt INTEGER NOT NULL
        );
        CREATE INDEX deletedSampleByType ON deletedSample (typeId, anchor);
        INSERT INTO grdb_migrations (identifier) VALUES ('v2-sync-and-tombstones');

        CREATE TABLE minuteRollup (
            typeId INTEGER NOT NULL,
            minute INTEGER NOT NULL,
            sourceId INTEGER NOT NULL,
            count INTEGER NOT NULL,
            sum REAL NOT NULL,
            minimum REAL NOT NULL,
            maximum REAL NOT NULL,
            PRIMARY KEY (typeId, minute, sourceId)
        ) WITHOUT ROWID;
        INSERT INTO grdb_migrations (identifier) VALUES ('v3-minute-rollups');

        CREATE TABLE sensorActivity (
            identifier TEXT PRIMARY KEY CHECK (identifier <> ''),
            transport TEXT NOT NULL,
            state TEXT NOT NULL,
            detail TEXT,
            since INTEGER NOT NULL,
            battery INTEGER CHECK (battery BETWEEN 0 AND 100),
            lastFrame INTEGER,
            frames INTEGER NOT NULL CHECK (frames >= 0),
            skipped INTEGER NOT NULL CHECK (skipped >= 0),
            updatedAt INTEGER NOT NULL
        ) WITHOUT ROWID;
        INSERT INTO grdb_migrations (identifier) VALUES ('v4-sensor-activity');
        """
}
