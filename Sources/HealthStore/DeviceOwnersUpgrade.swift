import HealthModel
import GRDB

/// Migration v8: device records belong to the source that wrote them. Before it, table
/// `device` was keyed by local identifier alone, so a source saving a sample with another
/// source's device identifier got that source's device details (name, manufacturer, model,
/// versions) with its own samples, and learnt which identifiers existed. The table is rebuilt
/// with an owner, `sourceId`, unique with the identifier: two sources naming one identifier
/// have a record each.
///
/// Existing records, in the migration's transaction:
/// - A record used by the samples (table `series`, the only table holding a `deviceId` since
///   v6) of one source goes to that source, unchanged, with its id.
/// - A record used by several sources' samples: which of them wrote its details is
///   unknowable. It stays, unchanged and with its id, with the daemon's source `hrmd` when that
///   is among them (the recording daemon is what reads details off a strap), else with the
///   lowest source id among them. Every other source gets a new record with the identifier
///   only, and its chunks are repointed to it.
/// - A record no sample uses goes to `hrmd` when that source exists, else it is dropped. Only
///   the recording daemon names devices it has not stored samples from yet (a strap whose
///   samples were all deleted keeps its record), so `hrmd` is its likely writer and keeping it
///   keeps `hrmctl devices` as it was; without `hrmd` there is no owner to give it that would
///   not risk showing one source what another wrote, and a record without samples shows no
///   sample's device.
struct DeviceOwnersUpgrade {
    /// The new table, made under a name of its own and renamed `device` once the old one is
    /// dropped (SQLite cannot drop the old UNIQUE constraint in place).
    static let createDevice = """
        -- A source's devices: each source's record of a local identifier holds what that
        -- source said about it, and only that source's chunks name it (series.deviceId).
        CREATE TABLE deviceOwned (
            id INTEGER PRIMARY KEY,
            sourceId INTEGER NOT NULL,
            localIdentifier TEXT NOT NULL CHECK (localIdentifier <> ''),
            name TEXT,
            manufacturer TEXT,
            model TEXT,
            hardwareVersion TEXT,
            firmwareVersion TEXT,
            softwareVersion TEXT,
            UNIQUE (sourceId, localIdentifier)
        );
        """

    /// What follows the rename.
    static let indexDevice = """
        -- The inventory and the queries by identifier across sources.
        CREATE INDEX deviceByIdentifier ON device (localIdentifier);
        """

    func run(_ db: Database) throws {
        let daemonID = try Int64.fetchOne(db, sql: "SELECT id FROM source WHERE name = ?", arguments: [HealthSource.daemonName])
        // Which sources' chunks use each record: one pass over the chunks.
        var users: [Int64: Set<Int64>] = [:]
        let uses = try Row.fetchCursor(db, sql: "SELECT DISTINCT deviceId, sourceId FROM series WHERE deviceId IS NOT NULL")
        while let use = try uses.next() {
            users[use[0], default: []].insert(use[1])
        }

        try db.execute(sql: Self.createDevice)
        let details = "localIdentifier, name, manufacturer, model, hardwareVersion, firmwareVersion, softwareVersion"
        let keep = try db.makeStatement(sql: """
            INSERT INTO deviceOwned (id, sourceId, \(details))
            SELECT id, ?, \(details) FROM device WHERE id = ?
            """)
        var moves: [(deviceID: Int64, sourceID: Int64)] = []
        for deviceID in try Int64.fetchAll(db, sql: "SELECT id FROM device ORDER BY id") {
            let sources = users[deviceID] ?? []
            let owner: Int64? = if let daemonID, sources.isEmpty || sources.contains(daemonID) { daemonID } else { sources.min() }
            guard let owner else { continue }  // no sample uses it and there is no hrmd: dropped
            try keep.execute(arguments: [owner, deviceID])
            moves += sources.filter { $0 != owner }.sorted().map { (deviceID, $0) }
        }
        if !moves.isEmpty { try split(moves, db) }
        try db.execute(sql: "DROP TABLE device; ALTER TABLE deviceOwned RENAME TO device")
        try db.execute(sql: Self.indexDevice)
    }

    /// Gives each (record, source) of `moves` a new record of the source with the record's
    /// identifier only, and repoints that source's chunks to it.
    private func split(_ moves: [(deviceID: Int64, sourceID: Int64)], _ db: Database) throws {
        try db.execute(sql: """
            CREATE TEMP TABLE deviceMove (
                oldId INTEGER NOT NULL, sourceId INTEGER NOT NULL, newId INTEGER NOT NULL, PRIMARY KEY (oldId, sourceId)
            ) WITHOUT ROWID
            """)
        let add = try db.makeStatement(sql: """
            INSERT INTO deviceOwned (sourceId, localIdentifier) SELECT ?, localIdentifier FROM device WHERE id = ?
            """)
        let note = try db.makeStatement(sql: "INSERT INTO deviceMove (oldId, sourceId, newId) VALUES (?, ?, ?)")
        for move in moves {
            try add.execute(arguments: [move.sourceID, move.deviceID])
            try note.execute(arguments: [move.deviceID, move.sourceID, db.lastInsertedRowID])
        }
        // One pass over the chunks.
        try db.execute(sql: """
            UPDATE series SET deviceId = (SELECT newId FROM deviceMove m WHERE m.oldId = series.deviceId AND m.sourceId = series.sourceId)
            WHERE EXISTS (SELECT 1 FROM deviceMove m WHERE m.oldId = series.deviceId AND m.sourceId = series.sourceId);
            DROP TABLE deviceMove;
            """)
    }
}
