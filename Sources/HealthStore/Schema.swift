import HealthModel
import GRDB
import Timestamps

/// The store's tables, built by named migrations. A migration, once released, never changes:
/// new structure goes into a new migration so that every older file upgrades in place.
enum Schema {
    /// The first schema: types, sources, devices, authorization and samples.
    static let core = "v1-core"
    /// Sync identifiers with versions, the anchor sequence, and tombstones for deleted samples.
    static let syncAndTombstones = "v2-sync-and-tombstones"
    /// Per-minute count, sum, minimum and maximum of each type and source, kept at write time.
    static let minuteRollups = "v3-minute-rollups"
    /// What each sensor is doing now, as the recording daemon last said.
    static let sensorActivity = "v4-sensor-activity"
    /// Whether share and read were requested, apart from the user's answers, so that pending
    /// requests can be listed.
    static let authorizationRequests = "v5-authorization-requests"
    /// Samples kept as compressed series chunks (table `series`) instead of one row each;
    /// the chunks' summaries replace the per-minute rollups.
    static let series = "v6-series"
    /// A secret only the store's owner reads: the key of the tokens the store service gives
    /// applications in place of sample ids and anchors.
    static let serviceSecret = "v7-service-secret"
    /// Device records belong to the source that wrote them: `device` gains `sourceId`, unique
    /// with the local identifier (`DeviceOwnersUpgrade`).
    static let deviceOwners = "v8-device-owners"
    /// Bearer tokens of the HTTP front: each acts as one source; only a digest of its secret
    /// is kept.
    static let accessTokens = "v9-access-tokens"
    /// The ANT+ beat stamp (`ANTBeatStamp`) of each sample made from an ANT+ page, by anchor,
    /// so that a central store can tell two gateways' copies of one beat apart from two beats.
    static let antBeats = "v10-ant-beats"
    /// People, and which strap each wore when (`HealthStore+People`).
    static let people = "v11-people"
    /// Workouts and their events, with tombstones (`HealthStore+Workouts`).
    static let workouts = "v12-workouts"
    static let packedWorkoutEvents = "v13-packed-workout-events"
    /// Events (category samples: high and low heart rate, contact lost, battery low) with
    /// their anchors (`HealthStore+Events`).
    static let events = "v14-events"
    /// A person's own alert thresholds (`person.alertHigh`, `alertLow`).
    static let personAlerts = "v15-person-alerts"
    /// Deleted events' tombstones (`deletedEvent`), as workouts have theirs.
    static let deletedEvents = "v16-deleted-events"
    /// Waveform recordings (electrocardiogram, acceleration), their compressed chunks and
    /// their tombstones (`HealthStore+Waveforms`).
    static let waveforms = "v17-waveforms"

    /// The minute of a microsecond time column, rounded down (also before 1970).
    static func minute(of column: String) -> String {
        "((\(column) - ((\(column) % 60000000) + 60000000) % 60000000) / 60000000)"
    }

    /// The migrations, with no one to hear of an upgrade's progress.
    static var migrator: DatabaseMigrator { makeMigrator() }

    /// The migrations; `progress` hears how far the conversion to series has come (samples
    /// converted, samples in all) when an older store is upgraded.
    static func makeMigrator(progress: (@Sendable (_ done: Int, _ total: Int) -> Void)? = nil) -> DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration(core, migrate: createCore)
        migrator.registerMigration(syncAndTombstones, migrate: addSyncAndTombstones)
        migrator.registerMigration(minuteRollups, migrate: addMinuteRollups)
        migrator.registerMigration(sensorActivity, migrate: addSensorActivity)
        migrator.registerMigration(authorizationRequests, migrate: addAuthorizationRequests)
        migrator.registerMigration(series) { db in try SeriesUpgrade(progress: progress).run(db) }
        migrator.registerMigration(serviceSecret, migrate: addServiceSecret)
        migrator.registerMigration(deviceOwners) { db in try DeviceOwnersUpgrade().run(db) }
        migrator.registerMigration(accessTokens, migrate: addAccessTokens)
        migrator.registerMigration(antBeats, migrate: addANTBeats)
        migrator.registerMigration(people, migrate: addPeople)
        migrator.registerMigration(workouts, migrate: addWorkouts)
        migrator.registerMigration(packedWorkoutEvents, migrate: packWorkoutEvents)
        migrator.registerMigration(events, migrate: addEvents)
        migrator.registerMigration(personAlerts) { db in
            try db.execute(sql: "ALTER TABLE person ADD COLUMN alertHigh REAL; ALTER TABLE person ADD COLUMN alertLow REAL")
        }
        migrator.registerMigration(deletedEvents) { db in
            try db.execute(sql: """
                CREATE TABLE deletedEvent (
                    anchor INTEGER PRIMARY KEY,
                    uuid TEXT NOT NULL,
                    typeId INTEGER NOT NULL,
                    sourceId INTEGER NOT NULL REFERENCES source (id),
                    device TEXT,
                    deletedAt INTEGER NOT NULL
                )
                """)
        }
        migrator.registerMigration(waveforms, migrate: addWaveforms)
        return migrator
    }

    private static func createCore(_ db: Database) throws {
        try db.execute(sql: """
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
            -- Times are microseconds since the Unix epoch, UTC. Values are in the type's
            -- canonical unit. typeId, sourceId and deviceId name rows of sampleType, source
            -- and device; only the store's writer inserts samples and it resolves them, so
            -- they are not declared as foreign keys (that would cost three lookups per row).
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
            -- Identity (source, device, type, start), ordered for time-range queries by type.
            CREATE UNIQUE INDEX sampleIdentity ON sample (typeId, start, sourceId, IFNULL(deviceId, 0));
            """)
    }

    private static func addSyncAndTombstones(_ db: Database) throws {
        try db.execute(sql: """
            ALTER TABLE sample ADD COLUMN syncIdentifier TEXT;
            ALTER TABLE sample ADD COLUMN syncVersion INTEGER;
            CREATE UNIQUE INDEX sampleSync ON sample (sourceId, syncIdentifier)
                WHERE syncIdentifier IS NOT NULL;
            -- One sequence numbers every change: a sample's id is the anchor at which it was
            -- added, a tombstone's anchor is where it was deleted; so "what changed since
            -- anchor N" sees additions and deletions in order, and no id is ever reused.
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
            """)
    }

    private static func addMinuteRollups(_ db: Database) throws {
        try db.execute(sql: """
            -- Statistics over long ranges read these instead of every sample.
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
            INSERT INTO minuteRollup (typeId, minute, sourceId, count, sum, minimum, maximum)
                SELECT typeId, \(minute(of: "start")), sourceId, COUNT(*), SUM(value), MIN(value), MAX(value)
                FROM sample GROUP BY 1, 2, 3;
            """)
    }

    private static func addSensorActivity(_ db: Database) throws {
        try db.execute(sql: """
            -- Live state, not health data: the recording daemon replaces it every few seconds,
            -- so a reader can tell a stale row (the daemon stopped) by updatedAt.
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
            """)
    }

    private static func addAuthorizationRequests(_ db: Database) throws {
        try db.execute(sql: """
            ALTER TABLE authorization ADD COLUMN shareRequested INTEGER NOT NULL DEFAULT 0 CHECK (shareRequested IN (0, 1));
            ALTER TABLE authorization ADD COLUMN readRequested INTEGER NOT NULL DEFAULT 0 CHECK (readRequested IN (0, 1));
            -- Before v5 a row with an unanswered share status was only ever made by a request
            -- (or by a save, which counts as one).
            UPDATE authorization SET shareRequested = 1 WHERE shareStatus = 0;
            """)
    }

    private static func addServiceSecret(_ db: Database) throws {
        try db.execute(sql: """
            CREATE TABLE serviceSecret (
                id INTEGER PRIMARY KEY CHECK (id = 1),
                secret BLOB NOT NULL CHECK (length(secret) = 16)
            );
            INSERT INTO serviceSecret (id, secret) VALUES (1, randomblob(16));
            """)
    }

    private static func addAccessTokens(_ db: Database) throws {
        try db.execute(sql: """
            CREATE TABLE accessToken (
                id TEXT PRIMARY KEY,
                source TEXT NOT NULL,
                manager INTEGER NOT NULL CHECK (manager IN (0, 1)),
                digest BLOB NOT NULL CHECK (length(digest) = 32),
                created INTEGER NOT NULL,
                expires INTEGER,
                revoked INTEGER
            ) WITHOUT ROWID;
            """)
    }

    private static func addANTBeats(_ db: Database) throws {
        try db.execute(sql: """
            -- anchor is the sample's id; stamp is ANTBeatStamp.packed (count << 16 | eventTime).
            -- Only samples with a stamp have a row, and a deleted sample's row goes with it.
            CREATE TABLE antBeat (anchor INTEGER PRIMARY KEY, stamp INTEGER NOT NULL);
            """)
    }

    private static func addPeople(_ db: Database) throws {
        try db.execute(sql: """
            -- zones is ZoneMethod's text: percent-max, reserve, or five bounds joined by commas.
            CREATE TABLE person (
                id INTEGER PRIMARY KEY,
                name TEXT NOT NULL UNIQUE CHECK (name <> ''),
                birthYear INTEGER,
                sex TEXT CHECK (sex IN ('female', 'male')),
                weightKilograms REAL,
                restingHeartRate REAL,
                maximumHeartRate REAL,
                zones TEXT NOT NULL
            );
            -- A device's samples starting in [start, end) are the person's (end NULL: open).
            -- A device's assignments never overlap.
            CREATE TABLE assignment (
                device TEXT NOT NULL CHECK (device <> ''),
                start INTEGER NOT NULL,
                end INTEGER CHECK (end IS NULL OR end > start),
                personId INTEGER NOT NULL REFERENCES person (id) ON DELETE CASCADE,
                PRIMARY KEY (device, start)
            ) WITHOUT ROWID;
            CREATE INDEX assignmentPerson ON assignment (personId);
            """)
    }

    private static func addWorkouts(_ db: Database) throws {
        try db.execute(sql: """
            -- A workout is a person's (by name, kept when the person is removed) or a device's.
            -- anchor is the change that last touched it, from the one anchor sequence.
            CREATE TABLE workout (
                id INTEGER PRIMARY KEY,
                uuid TEXT NOT NULL UNIQUE,
                anchor INTEGER NOT NULL UNIQUE,
                sourceId INTEGER NOT NULL REFERENCES source (id),
                person TEXT CHECK (person <> ''),
                device TEXT CHECK (device <> ''),
                activity TEXT NOT NULL,
                start INTEGER NOT NULL,
                "end" INTEGER CHECK ("end" IS NULL OR "end" >= start),
                CHECK (person IS NOT NULL OR device IS NOT NULL)
            );
            CREATE INDEX workoutStart ON workout (start);
            -- One open workout per person, and per device that is nobody's.
            CREATE UNIQUE INDEX workoutOpenPerson ON workout (person) WHERE "end" IS NULL AND person IS NOT NULL;
            CREATE UNIQUE INDEX workoutOpenDevice ON workout (device) WHERE "end" IS NULL AND person IS NULL;
            CREATE TABLE workoutEvent (
                workoutId INTEGER NOT NULL REFERENCES workout (id) ON DELETE CASCADE,
                position INTEGER NOT NULL,
                type TEXT NOT NULL,
                time INTEGER NOT NULL,
                PRIMARY KEY (workoutId, position)
            ) WITHOUT ROWID;
            CREATE TABLE deletedWorkout (
                anchor INTEGER PRIMARY KEY,
                uuid TEXT NOT NULL,
                sourceId INTEGER NOT NULL REFERENCES source (id),
                deletedAt INTEGER NOT NULL
            );
            """)
    }

    /// A workout's events move into the workout's row, packed (``WorkoutEventPacking``): 9
    /// bytes an event instead of a row of their own (25.6 B measured), read and written with
    /// the workout.
    private static func packWorkoutEvents(_ db: Database) throws {
        try db.execute(sql: "ALTER TABLE workout ADD COLUMN events BLOB NOT NULL DEFAULT x''")
        var packed: [Int64: [WorkoutEvent]] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT workoutId, type, time FROM workoutEvent ORDER BY workoutId, position") {
            let type = WorkoutEventType(rawValue: row[1]) ?? .marker
            packed[row[0], default: []].append(WorkoutEvent(type, at: Timestamp(microsecondsSinceEpoch: row[2])))
        }
        for (workout, events) in packed {
            try db.execute(sql: "UPDATE workout SET events = ? WHERE id = ?", arguments: [WorkoutEventPacking.bytes(of: events), workout])
        }
        try db.execute(sql: "DROP TABLE workoutEvent")
    }

    /// Events, one row each, changed in place at a new anchor (an open event is extended,
    /// then closed). One open event per type, source and strap.
    private static func addEvents(_ db: Database) throws {
        try db.execute(sql: """
            CREATE TABLE healthEvent (
                id INTEGER PRIMARY KEY,
                uuid TEXT NOT NULL UNIQUE,
                anchor INTEGER NOT NULL UNIQUE,
                typeId INTEGER NOT NULL,
                sourceId INTEGER NOT NULL REFERENCES source (id),
                device TEXT CHECK (device <> ''),
                person TEXT CHECK (person <> ''),
                start INTEGER NOT NULL,
                latest INTEGER NOT NULL CHECK (latest >= start),
                "end" INTEGER CHECK ("end" IS NULL OR "end" = latest),
                threshold REAL,
                extreme REAL,
                CHECK (person IS NOT NULL OR device IS NOT NULL)
            );
            CREATE INDEX healthEventStart ON healthEvent (start);
            CREATE UNIQUE INDEX healthEventOpen ON healthEvent (typeId, sourceId, device) WHERE "end" IS NULL;
            """)
    }

    /// A recording's row holds what lists it; its samples are in `waveformChunk`, each chunk
    /// consecutive instants from its `start` (µs) at the recording's `frequency`, coded by
    /// `WaveformEncoder`. A chunk does not span a gap, so the gaps are where one chunk ends
    /// before the next starts.
    private static func addWaveforms(_ db: Database) throws {
        try db.execute(sql: """
            CREATE TABLE waveform (
                id INTEGER PRIMARY KEY,
                uuid TEXT NOT NULL UNIQUE,
                anchor INTEGER NOT NULL UNIQUE,
                typeId INTEGER NOT NULL,
                sourceId INTEGER NOT NULL REFERENCES source (id),
                device TEXT CHECK (device <> ''),
                frequency REAL NOT NULL CHECK (frequency > 0),
                start INTEGER NOT NULL,
                "end" INTEGER NOT NULL CHECK ("end" >= start),
                instants INTEGER NOT NULL CHECK (instants >= 0),
                open INTEGER NOT NULL CHECK (open IN (0, 1))
            );
            CREATE INDEX waveformStart ON waveform (start);
            CREATE TABLE waveformChunk (
                waveformId INTEGER NOT NULL REFERENCES waveform (id) ON DELETE CASCADE,
                start INTEGER NOT NULL,
                instants INTEGER NOT NULL CHECK (instants > 0),
                data BLOB NOT NULL,
                PRIMARY KEY (waveformId, start)
            ) WITHOUT ROWID;
            CREATE TABLE deletedWaveform (
                anchor INTEGER PRIMARY KEY,
                uuid TEXT NOT NULL,
                typeId INTEGER NOT NULL,
                sourceId INTEGER NOT NULL REFERENCES source (id),
                device TEXT,
                deletedAt INTEGER NOT NULL
            );
            """)
    }

    /// Whether the store's `sampleType` table holds the code's catalogue as it is.
    static func typesRegistered(_ db: Database) throws -> Bool {
        let rows = try Row.fetchAll(db, sql: "SELECT id, identifier, unit, aggregation FROM sampleType ORDER BY id")
        return rows.count == SampleType.all.count && zip(rows, SampleType.all).allSatisfy { row, type in
            row[0] == type.storageID && row[1] == type.identifier && row[2] == type.canonicalUnit.unitString
                && row[3] == type.aggregation.rawValue
        }
    }

    /// Records the code's type catalogue in the store (new types of a newer version are added).
    static func registerTypes(_ db: Database) throws {
        for type in SampleType.all {
            try db.execute(
                sql: """
                    INSERT INTO sampleType (id, identifier, unit, aggregation) VALUES (?, ?, ?, ?)
                    ON CONFLICT (id) DO UPDATE SET identifier = excluded.identifier,
                        unit = excluded.unit, aggregation = excluded.aggregation
                    """,
                arguments: [type.storageID, type.identifier, type.canonicalUnit.unitString, type.aggregation.rawValue])
        }
    }
}
