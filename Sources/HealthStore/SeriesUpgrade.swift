import HealthModel
import GRDB

/// Migration v6: creates table `series` and converts the rows of table `sample` into chunks,
/// in one transaction, so the old rows are gone only once the chunks holding them are
/// committed. A sample's id becomes its anchor in its chunk, so ids, anchors and tombstones
/// keep their meaning.
struct SeriesUpgrade {
    /// Hears (samples converted, samples in all) every `progressStep` samples and at the end.
    let progress: (@Sendable (_ done: Int, _ total: Int) -> Void)?
    private let progressStep = 50_000

    static let createSeries = """
        -- The samples of one (type, source, device) with one shape (how the end follows from
        -- the start, the metadata, the sync stamp) in one UTC hour, at most 256, in start
        -- order, encoded in SeriesFormat version 1: `points` holds each start (in ticks of
        -- `tick` microseconds) and value, `anchors` each sample's id and, for heartbeat
        -- series, whether the beat is preceded by a gap. start and last are the first and
        -- last start; count, minimum, maximum and sum serve statistics without decoding.
        -- duration is every sample's end less its start, microseconds; NULL marks a heartbeat
        -- series, whose samples end at start + value (an RR interval in milliseconds).
        CREATE TABLE series (
            id INTEGER PRIMARY KEY,
            typeId INTEGER NOT NULL,
            sourceId INTEGER NOT NULL,
            deviceId INTEGER,
            start INTEGER NOT NULL,
            last INTEGER NOT NULL CHECK (last >= start),
            count INTEGER NOT NULL CHECK (count > 0),
            minimum REAL NOT NULL,
            maximum REAL NOT NULL,
            sum REAL NOT NULL,
            firstAnchor INTEGER NOT NULL,
            lastAnchor INTEGER NOT NULL,
            duration INTEGER,
            sensorLocation INTEGER CHECK (sensorLocation BETWEEN 0 AND 6),
            sensorContact INTEGER CHECK (sensorContact IN (0, 1)),
            metadata TEXT,
            syncIdentifier TEXT,
            syncVersion INTEGER,
            tick INTEGER NOT NULL CHECK (tick IN (1, 1000, 1000000)),
            points BLOB NOT NULL,
            anchors BLOB NOT NULL,
            CHECK (syncIdentifier IS NULL OR count = 1)
        );
        -- Time-range reads and statistics by type.
        CREATE INDEX seriesByTime ON series (typeId, start);
        -- A key's chunks by time: identity checks and the open chunk of a live strap.
        CREATE INDEX seriesByKey ON series (sourceId, typeId, IFNULL(deviceId, 0), start, last);
        -- Anchored queries: the chunks holding samples added after an anchor.
        CREATE INDEX seriesByAnchor ON series (typeId, lastAnchor, firstAnchor);
        CREATE UNIQUE INDEX seriesSync ON series (sourceId, syncIdentifier) WHERE syncIdentifier IS NOT NULL;
        """

    func run(_ db: Database) throws {
        try Self.addMissingAnchorSequence(db)
        try db.execute(sql: Self.createSeries)
        try db.execute(sql: HourSummaries.createTable)
        let total = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM sample") ?? 0
        var builders: [SeriesKey: ChunkBuilder] = [:]
        let budget = try ChunkBudget(db)
        // The identity index's order: by type and time, so every key's samples come in start order.
        let rows = try Row.fetchCursor(db, sql: """
            SELECT id, typeId, sourceId, deviceId, start, "end", value, sensorLocation, sensorContact, metadata,
                   syncIdentifier, syncVersion
            FROM sample ORDER BY typeId, start, sourceId, IFNULL(deviceId, 0)
            """)
        var done = 0
        while let row = try rows.next() {
            let key = SeriesKey(typeID: row[1], sourceID: row[2], deviceID: row[3])
            let start: Int64 = row[4], end: Int64 = row[5], value: Double = row[6]
            let location: Int? = row[7], contact: Int? = row[8], syncIdentifier: String? = row[10]
            let type = SampleType(storageID: key.typeID)
            let shape = ChunkShape(
                span: type.map { ChunkShape.Span(type: $0, start: start, end: end, value: value) } ?? .fixed(end &- start),
                sensorLocation: location.flatMap(HeartRateSensorLocation.init(rawValue:)),
                sensorContact: contact.map { $0 != 0 }, extra: row[9],
                sync: syncIdentifier.map { ChunkShape.SyncStamp(identifier: $0, version: row[11] ?? 0) })
            try builders[key, default: ChunkBuilder(key: key, budget: budget)].add(start: start, value: value, anchor: row[0], shape: shape, db)
            done += 1
            if done % progressStep == 0 { progress?(done, total) }
        }
        for var builder in builders.values { try builder.flush(db) }
        try HourSummaries.rebuild(db)
        if total > 0 { progress?(total, total) }
        try db.execute(sql: "DROP TABLE sample; DROP TABLE IF EXISTS minuteRollup")
    }
}

extension SeriesUpgrade {
    /// The first released form of `v2-sync-and-tombstones` took anchors from the sample ids'
    /// AUTOINCREMENT sequence and had no `anchorSequence`; a store made then gets one that
    /// continues after every id and tombstone it holds.
    static func addMissingAnchorSequence(_ db: Database) throws {
        guard try !db.tableExists("anchorSequence") else { return }
        var last = try Int64.fetchOne(db, sql: """
            SELECT MAX((SELECT IFNULL(MAX(id), 0) FROM sample), (SELECT IFNULL(MAX(anchor), 0) FROM deletedSample))
            """) ?? 0
        if try db.tableExists("sqlite_sequence") {
            last = max(last, try Int64.fetchOne(db, sql: "SELECT seq FROM sqlite_sequence WHERE name = 'sample'") ?? 0)
        }
        try db.execute(sql: """
            CREATE TABLE anchorSequence (
                id INTEGER PRIMARY KEY CHECK (id = 1),
                lastAnchor INTEGER NOT NULL
            );
            INSERT INTO anchorSequence (id, lastAnchor) VALUES (1, ?);
            """, arguments: [last])
    }
}

/// Gathers one key's samples, in start order, into chunks as they come: a chunk is written
/// when it is full (`ChunkBudget`), when the hour changes or when the shape does.
private struct ChunkBuilder {
    let key: SeriesKey
    let budget: ChunkBudget
    private var shape: ChunkShape?
    private var hour: Int64 = 0
    private var points = SeriesPoints()
    /// How many samples the chunk written last took: likely as many as the next takes.
    private var lastCount: Int?
    /// The key's previous beat, for the gap flags of heartbeat series.
    private var lastBeat: (start: Int64, value: Double)?

    init(key: SeriesKey, budget: ChunkBudget) {
        self.key = key
        self.budget = budget
    }

    mutating func add(start: Int64, value: Double, anchor: Int64, shape: ChunkShape, _ db: Database) throws {
        var gap = false
        if shape.span == .beat {
            gap = lastBeat.map { !ChunkShape.Span.adjacentBeats($0, (start, value)) } ?? true
            lastBeat = (start, value)
        }
        if shape.sync != nil {
            var single = SeriesPoints()
            single.append(start: start, value: value, anchor: anchor, precededByGap: gap)
            try SeriesTable.insert(key: key, shape: shape, points: single, db)
            return
        }
        let hour = SeriesBlobs.hour(of: start)
        if shape != self.shape || hour != self.hour {
            try flush(db)
            self.shape = shape
            self.hour = hour
        } else if points.count == SeriesBlobs.maximumCount {
            try writeChunk(db)
        }
        points.append(start: start, value: value, anchor: anchor, precededByGap: gap)
    }

    /// Writes every sample gathered.
    mutating func flush(_ db: Database) throws {
        while !points.isEmpty { try writeChunk(db) }
    }

    /// Writes the longest chunk of the first samples gathered that the budget admits, and
    /// keeps the rest for the next.
    private mutating func writeChunk(_ db: Database) throws {
        guard let shape else { return }
        let key = key
        let chunk = budget.longestChunk(of: points, from: 0, hint: lastCount) {
            SeriesTable.cellBytes(key: key, shape: shape, chunk: $0, rowID: nil)
        }
        try SeriesTable.insert(key: key, shape: shape, chunk: chunk, db)
        points = points.selecting(chunk.count..<points.count)
        lastCount = chunk.count
    }
}
