import HealthModel
import GRDB

/// Keeps table `hourSummary` (count, minimum, maximum and sum of each type and source per
/// UTC hour) in step with the chunks: statistics over days or hours read one row per hour
/// instead of every chunk. A save adds what it accepted, summed per hour in memory and written
/// once; an hour where samples were replaced or deleted is summed again from its chunks.
struct HourSummaries {
    struct Hour: Hashable {
        var typeID: Int
        var sourceID: Int64
        var hour: Int64
    }

    private var added: [Hour: SeriesSummary] = [:]
    private var stale: Set<Hour> = []
    /// The hour of the previous addition: saves come in long runs of one hour.
    private var recent: (hour: Hour, summary: SeriesSummary)?

    /// Counts one accepted sample.
    mutating func add(typeID: Int, sourceID: Int64, start: Int64, value: Double) {
        let hour = Hour(typeID: typeID, sourceID: sourceID, hour: SeriesBlobs.hour(of: start))
        if var recent, recent.hour == hour {
            recent.summary.add(value)
            self.recent = recent
            return
        }
        park()
        var summary = added[hour] ?? SeriesSummary()
        summary.add(value)
        recent = (hour, summary)
    }

    /// Marks an hour whose samples were replaced or deleted, to be summed again.
    mutating func invalidate(typeID: Int, sourceID: Int64, start: Int64) {
        stale.insert(Hour(typeID: typeID, sourceID: sourceID, hour: SeriesBlobs.hour(of: start)))
    }

    /// Writes the changes; call once the chunks are written.
    mutating func write(_ db: Database) throws {
        park()
        let upsert = try db.cachedStatement(sql: """
            INSERT INTO hourSummary (typeId, sourceId, hour, count, minimum, maximum, sum) VALUES (?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT (typeId, hour, sourceId) DO UPDATE SET
                count = count + excluded.count, minimum = MIN(minimum, excluded.minimum),
                maximum = MAX(maximum, excluded.maximum), sum = sum + excluded.sum
            """)
        for (hour, summary) in added where !stale.contains(hour) {
            try upsert.execute(arguments: [hour.typeID, hour.sourceID, hour.hour, summary.count, summary.minimum, summary.maximum, summary.sum])
        }
        for hour in stale { try Self.recompute(hour, db) }
        added.removeAll()
        stale.removeAll()
    }

    private mutating func park() {
        guard let recent else { return }
        added[recent.hour] = recent.summary
        self.recent = nil
    }

    /// Sums one hour again from its chunks.
    private static func recompute(_ hour: Hour, _ db: Database) throws {
        try db.execute(
            sql: "DELETE FROM hourSummary WHERE typeId = ? AND hour = ? AND sourceId = ?",
            arguments: [hour.typeID, hour.hour, hour.sourceID])
        try db.execute(
            sql: """
                INSERT INTO hourSummary (typeId, sourceId, hour, count, minimum, maximum, sum)
                SELECT typeId, sourceId, ?, SUM(count), MIN(minimum), MAX(maximum), SUM(sum) FROM series
                WHERE typeId = ? AND sourceId = ? AND start >= ? AND start < ?
                GROUP BY typeId, sourceId
                """,
            arguments: [hour.hour, hour.typeID, hour.sourceID, hour.hour * SeriesBlobs.hour, (hour.hour + 1) * SeriesBlobs.hour])
    }

    /// Sums every hour from the chunks (the upgrade to series).
    static func rebuild(_ db: Database) throws {
        let hour = "((start - ((start % \(SeriesBlobs.hour)) + \(SeriesBlobs.hour)) % \(SeriesBlobs.hour)) / \(SeriesBlobs.hour))"
        try db.execute(sql: """
            DELETE FROM hourSummary;
            INSERT INTO hourSummary (typeId, sourceId, hour, count, minimum, maximum, sum)
            SELECT typeId, sourceId, \(hour), SUM(count), MIN(minimum), MAX(maximum), SUM(sum) FROM series
            GROUP BY 1, 2, 3;
            """)
    }

    static let createTable = """
        -- Count, minimum, maximum and sum per type, source and UTC hour: statistics over hours
        -- and days read these for the whole hours of their range.
        CREATE TABLE hourSummary (
            typeId INTEGER NOT NULL,
            sourceId INTEGER NOT NULL,
            hour INTEGER NOT NULL,
            count INTEGER NOT NULL,
            minimum REAL NOT NULL,
            maximum REAL NOT NULL,
            sum REAL NOT NULL,
            PRIMARY KEY (typeId, hour, sourceId)
        ) WITHOUT ROWID;
        """
}
