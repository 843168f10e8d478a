import Foundation
import GRDB
import Timestamps

/// How `statistics` groups samples in time.
public enum StatisticsBucket: Sendable, Hashable {
    /// Fixed buckets of this many seconds, aligned to the Unix epoch (1m, 5m, 1h).
    case seconds(Int64)
    /// Calendar days in the local time zone (the process's TZ), as HKStatisticsCollectionQuery
    /// uses the calendar.
    case localDays
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
    public func statistics(
        of type: SampleType, by bucket: StatisticsBucket, since: Timestamp? = nil, until: Timestamp? = nil, source: String? = nil
    ) throws(HealthStoreError) -> [StatisticsBucketValue] {
        let from = since?.microsecondsSinceEpoch ?? Int64.min / 2
        let to = until?.microsecondsSinceEpoch ?? Int64.max / 2
        guard from < to else { return [] }
        // Whole minutes [firstMinute, endMinute) come from the rollups.
        let firstMinute = from >= 0 ? (from + 59_999_999) / 60_000_000 : from / 60_000_000
        let endMinute = to >= 0 ? to / 60_000_000 : (to - 59_999_999) / 60_000_000
        let usesRollups: Bool
        switch bucket {
        case .seconds(let width): usesRollups = width % 60 == 0
        case .localDays: usesRollups = true
        }
        var sourceCondition = ""
        var sourceArguments: StatementArguments = []
        if let source {
            sourceCondition = " AND sourceId = (SELECT id FROM source WHERE name = ?)"
            sourceArguments = [source]
        }
        func key(seconds expression: String) -> String {
            switch bucket {
            case .seconds(let width): "(\(expression) - ((\(expression) % \(width)) + \(width)) % \(width))"
            case .localDays: "date(\(expression), 'unixepoch', 'localtime')"
            }
        }
        var parts: [(sql: String, arguments: StatementArguments)] = []
        let rawSelect = """
            SELECT \(key(seconds: "(start / 1000000 - (CASE WHEN start < 0 AND start % 1000000 != 0 THEN 1 ELSE 0 END))")) AS bucket,
                   COUNT(*) AS n, SUM(value) AS total, MIN(value) AS low, MAX(value) AS high
            FROM sample WHERE typeId = ? AND start >= ? AND start < ?\(sourceCondition) GROUP BY bucket
            """
        if usesRollups && firstMinute < endMinute {
            parts.append((rawSelect, [type.storageID, from, firstMinute * 60_000_000] + sourceArguments))
            parts.append((
                """
                SELECT \(key(seconds: "(minute * 60)")) AS bucket, SUM(count) AS n, SUM(sum) AS total, MIN(minimum) AS low, MAX(maximum) AS high
                FROM minuteRollup WHERE typeId = ? AND minute >= ? AND minute < ?\(sourceCondition) GROUP BY bucket
                """,
                [type.storageID, firstMinute, endMinute] + sourceArguments))
            parts.append((rawSelect, [type.storageID, endMinute * 60_000_000, to] + sourceArguments))
        } else {
            parts.append((rawSelect, [type.storageID, from, to] + sourceArguments))
        }
        let sql = """
            SELECT bucket, SUM(n), MIN(low), SUM(total) / SUM(n), MAX(high), SUM(total)
            FROM (\(parts.map(\.sql).joined(separator: " UNION ALL ")))
            GROUP BY bucket HAVING SUM(n) > 0 ORDER BY bucket
            """
        var arguments: StatementArguments = []
        for part in parts { _ = arguments.append(contentsOf: part.arguments) }
        return try read { db in
            try Row.fetchAll(db, sql: sql, arguments: arguments).map { row in
                let (start, end) = Self.bounds(of: row, bucket: bucket)
                return StatisticsBucketValue(
                    start: start, end: end, count: row[1], minimum: row[2], average: row[3], maximum: row[4], sum: row[5])
            }
        }
    }

    private static func bounds(of row: Row, bucket: StatisticsBucket) -> (Timestamp, Timestamp) {
        switch bucket {
        case .seconds(let width):
            let start: Int64 = row[0]
            return (Timestamp(microsecondsSinceEpoch: start * 1_000_000), Timestamp(microsecondsSinceEpoch: (start + width) * 1_000_000))
        case .localDays:
            let day: String = row[0]
            let calendar = Calendar.current
            let parts = day.split(separator: "-").compactMap { Int($0) }
            var components = DateComponents()
            (components.year, components.month, components.day) = (parts[0], parts[1], parts[2])
            let startDate = calendar.date(from: components) ?? Date(timeIntervalSince1970: 0)
            let endDate = calendar.date(byAdding: .day, value: 1, to: startDate) ?? startDate
            return (Timestamp(secondsSinceEpoch: startDate.timeIntervalSince1970), Timestamp(secondsSinceEpoch: endDate.timeIntervalSince1970))
        }
    }
}
