import Foundation
import GRDB
import Timestamps

/// How `statistics` groups samples in time.
public enum StatisticsBucket: Sendable, Hashable {
    /// Fixed buckets of this many seconds, aligned to the Unix epoch (1m, 5m, 1h).
    case seconds(Int64)
    /// Calendar days in this time zone, as HKStatisticsCollectionQuery uses the calendar: a
    /// day starts at local midnight, and lasts 23 or 25 hours where the zone changes its
    /// offset.
    case days(TimeZone)

    /// Calendar days in the process's time zone (TZ).
    public static var localDays: StatisticsBucket { .days(.current) }
}

/// The statistics of one bucket, in the type's canonical unit.
public struct StatisticsBucketValue: Sendable, Hashable {
    public var start: Timestamp
    public var end: Timestamp
    public var count: Int
    public var minimum: Double
    public var average: Double
    public var maximum: Double
    public var sum: Double

    public init(start: Timestamp, end: Timestamp, count: Int, minimum: Double, average: Double, maximum: Double, sum: Double) {
        self.start = start
        self.end = end
        self.count = count
        self.minimum = minimum
        self.average = average
        self.maximum = maximum
        self.sum = sum
    }
}

extension HealthStore {
    /// Count, minimum, average, maximum and sum of `type` per bucket over [since, until), one
    /// value per non-empty bucket, oldest first (HKStatisticsCollectionQuery). Whole minutes
    /// are read from the per-minute rollups kept at write time; only the partial minutes at
    /// the ends of the range read samples.
    ///
    /// `source` keeps one source's samples. `reader` is the program asking, as in
    /// `SampleQuery.reader`: without read authorization for the type, only its own samples
    /// count.
    public func statistics(
        of type: SampleType, by bucket: StatisticsBucket, since: Timestamp? = nil, until: Timestamp? = nil,
        source: String? = nil, reader: String? = nil
    ) throws(HealthStoreError) -> [StatisticsBucketValue] {
        let from = since?.microsecondsSinceEpoch ?? Int64.min / 2
        let to = until?.microsecondsSinceEpoch ?? Int64.max / 2
        guard from < to else { return [] }
        return try read { db in
            var sourceConditions: [(sql: String, arguments: StatementArguments)] = []
            if let source { sourceConditions.append(("sourceId = (SELECT id FROM source WHERE name = ?)", [source])) }
            if let visible = try ReaderScope(reader: reader, type: type, db).condition(on: "sourceId") {
                sourceConditions.append(visible)
            }
            guard let keys = try BucketKeys(bucket, type: type, from: from, to: to, db) else { return [] }
            let query = StatisticsSQL(type: type, keys: keys, from: from, to: to, sourceConditions: sourceConditions)
            return try Row.fetchAll(db, sql: query.sql, arguments: query.arguments).compactMap { row in
                guard let (start, end) = keys.bounds(of: row) else { return nil }
                return StatisticsBucketValue(
                    start: start, end: end, count: row[1], minimum: row[2], average: row[3], maximum: row[4], sum: row[5])
            }
        }
    }
}

/// How a bucket's key is computed in SQL from integer seconds, and its bounds from the key.
private enum BucketKeys {
    case seconds(Int64)
    case days(ZoneDays)

    /// nil when no sample of `type` lies in [from, to).
    init?(_ bucket: StatisticsBucket, type: SampleType, from: Int64, to: Int64, _ db: Database) throws {
        switch bucket {
        case .seconds(let width):
            self = .seconds(width)
        case .days(let zone):
            // The zone's offsets are needed only where samples are.
            guard let row = try Row.fetchOne(
                db, sql: "SELECT MIN(start), MAX(start) FROM sample WHERE typeId = ? AND start >= ? AND start < ?",
                arguments: [type.storageID, from, to]),
                let first: Int64 = row[0], let last: Int64 = row[1]
            else { return nil }
            self = .days(ZoneDays(zone: zone, first: Self.floorSeconds(first), last: Self.floorSeconds(last)))
        }
    }

    /// Whether per-minute rollups fall wholly into one bucket.
    var minuteAligned: Bool {
        switch self {
        case .seconds(let width): width % 60 == 0
        case .days(let days): days.minuteAligned
        }
    }

    func key(seconds expression: String) -> String {
        switch self {
        case .seconds(let width): "(\(expression) - ((\(expression) % \(width)) + \(width)) % \(width))"
        case .days(let days): days.key(seconds: expression)
        }
    }

    func bounds(of row: Row) -> (Timestamp, Timestamp)? {
        switch self {
        case .seconds(let width):
            let start: Int64 = row[0]
            return (Timestamp(microsecondsSinceEpoch: start * 1_000_000), Timestamp(microsecondsSinceEpoch: (start + width) * 1_000_000))
        case .days(let days):
            guard let key: String = row[0] else { return nil }
            return days.bounds(ofDay: key)
        }
    }

    private static func floorSeconds(_ microseconds: Int64) -> Int64 {
        microseconds >= 0 ? microseconds / 1_000_000 : (microseconds - 999_999) / 1_000_000
    }
}

/// The statistics query: partial minutes at the ends from samples, whole minutes from the
/// rollups (when they fit the buckets), summed per bucket.
private struct StatisticsSQL {
    var sql = ""
    var arguments: StatementArguments = []

    init(type: SampleType, keys: BucketKeys, from: Int64, to: Int64, sourceConditions: [(sql: String, arguments: StatementArguments)]) {
        let sourceSQL = sourceConditions.map { " AND " + $0.sql }.joined()
        var sourceArguments: StatementArguments = []
        for condition in sourceConditions { _ = sourceArguments.append(contentsOf: condition.arguments) }
        // Whole minutes [firstMinute, endMinute) come from the rollups.
        let firstMinute = from >= 0 ? (from + 59_999_999) / 60_000_000 : from / 60_000_000
        let endMinute = to >= 0 ? to / 60_000_000 : (to - 59_999_999) / 60_000_000
        let rawSelect = """
            SELECT \(keys.key(seconds: "sec")) AS bucket, COUNT(*) AS n, SUM(value) AS total, MIN(value) AS low, MAX(value) AS high
            FROM (SELECT start / 1000000 - (CASE WHEN start < 0 AND start % 1000000 != 0 THEN 1 ELSE 0 END) AS sec, value
                  FROM sample WHERE typeId = ? AND start >= ? AND start < ?\(sourceSQL))
            GROUP BY bucket
            """
        var parts: [(sql: String, arguments: StatementArguments)] = []
        if keys.minuteAligned && firstMinute < endMinute {
            parts.append((rawSelect, [type.storageID, from, firstMinute * 60_000_000] + sourceArguments))
            parts.append((
                """
                SELECT \(keys.key(seconds: "sec")) AS bucket, SUM(count) AS n, SUM(sum) AS total, MIN(minimum) AS low, MAX(maximum) AS high
                FROM (SELECT minute * 60 AS sec, count, sum, minimum, maximum
                      FROM minuteRollup WHERE typeId = ? AND minute >= ? AND minute < ?\(sourceSQL))
                GROUP BY bucket
                """,
                [type.storageID, firstMinute, endMinute] + sourceArguments))
            parts.append((rawSelect, [type.storageID, endMinute * 60_000_000, to] + sourceArguments))
        } else {
            parts.append((rawSelect, [type.storageID, from, to] + sourceArguments))
        }
        sql = """
            SELECT bucket, SUM(n), MIN(low), SUM(total) / SUM(n), MAX(high), SUM(total)
            FROM (\(parts.map(\.sql).joined(separator: " UNION ALL ")))
            GROUP BY bucket HAVING SUM(n) > 0 ORDER BY bucket
            """
        for part in parts { _ = arguments.append(contentsOf: part.arguments) }
    }
}
