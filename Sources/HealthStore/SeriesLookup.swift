import HealthModel
import GRDB

/// The queries that find the chunks of one key, all through index `seriesByKey`.
enum SeriesLookup {
    /// The SQL condition that selects the chunks of one key, for `arguments(_:)`.
    static let keyCondition = "sourceId = ? AND typeId = ? AND IFNULL(deviceId, 0) = ?"

    static func arguments(_ key: SeriesKey) -> StatementArguments {
        [key.sourceID, key.typeID, key.deviceID ?? 0]
    }

    /// The chunks of `key` in `hour` that hold a sample starting in [low, high].
    static func chunks(of key: SeriesKey, hour: Int64, holdingStartsIn low: Int64, _ high: Int64, _ db: Database) throws -> [SeriesRow] {
        try Row.fetchAll(
            db.cachedStatement(sql: """
                SELECT \(SeriesRow.columns) FROM series
                WHERE \(keyCondition) AND start >= ? AND start <= ? AND last >= ?
                """),
            arguments: arguments(key) + [hour * SeriesBlobs.hour, high, low]
        ).map(SeriesRow.init)
    }

    /// The chunk of `key` in `hour` that starts last and has no sync stamp: the one new
    /// samples of the hour are added to.
    static func openChunk(of key: SeriesKey, hour: Int64, _ db: Database) throws -> SeriesRow? {
        try Row.fetchOne(
            db.cachedStatement(sql: """
                SELECT \(SeriesRow.columns) FROM series
                WHERE \(keyCondition) AND start >= ? AND start < ? AND syncIdentifier IS NULL
                ORDER BY start DESC LIMIT 1
                """),
            arguments: arguments(key) + [hour * SeriesBlobs.hour, (hour + 1) * SeriesBlobs.hour]
        ).map(SeriesRow.init)
    }

    /// The latest start of a sample of `key` stored in `hour`; nil when there is none.
    static func latestStart(of key: SeriesKey, hour: Int64, _ db: Database) throws -> Int64? {
        try Int64.fetchOne(
            db.cachedStatement(sql: "SELECT MAX(last) FROM series WHERE \(keyCondition) AND start >= ? AND start < ?"),
            arguments: arguments(key) + [hour * SeriesBlobs.hour, (hour + 1) * SeriesBlobs.hour])
    }

    /// The chunk of `key` that starts last before `time`.
    static func chunk(of key: SeriesKey, startingBefore time: Int64, _ db: Database) throws -> SeriesRow? {
        try Row.fetchOne(
            db,
            sql: "SELECT \(SeriesRow.columns) FROM series WHERE \(keyCondition) AND start < ? ORDER BY start DESC LIMIT 1",
            arguments: arguments(key) + [time]
        ).map(SeriesRow.init)
    }

    /// The chunk holding the sample `source` saved with sync identifier `identifier`.
    static func chunk(source sourceID: Int64, syncIdentifier identifier: String, _ db: Database) throws -> SeriesRow? {
        try Row.fetchOne(
            db, sql: "SELECT \(SeriesRow.columns) FROM series WHERE sourceId = ? AND syncIdentifier = ?",
            arguments: [sourceID, identifier]
        ).map(SeriesRow.init)
    }
}
