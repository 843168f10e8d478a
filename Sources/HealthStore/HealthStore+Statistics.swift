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
}

extension HealthStore {
    /// Count, minimum, average, maximum and sum of `type` per bucket over [since, until), one
    /// value per non-empty bucket, oldest first (HKStatisticsCollectionQuery).
    public func statistics(
        of type: SampleType, by bucket: StatisticsBucket, since: Timestamp? = nil, until: Timestamp? = nil, source: String? = nil
    ) throws(HealthStoreError) -> [StatisticsBucketValue] {
        var conditions = ["s.typeId = ?", "s.start >= ?", "s.start < ?"]
        var arguments: StatementArguments = [
            type.storageID, since?.microsecondsSinceEpoch ?? Int64.min, until?.microsecondsSinceEpoch ?? Int64.max,
        ]
        if let source {
            conditions.append("s.sourceId = (SELECT id FROM source WHERE name = ?)")
            _ = arguments.append(contentsOf: [source])
        }
        let key: String
        switch bucket {
        case .seconds(let width):
            key = "(s.start / 1000000 - ((s.start / 1000000) % \(width) + \(width)) % \(width))"
        case .localDays:
            key = "date(s.start / 1000000, 'unixepoch', 'localtime')"
        }
        let sql = """
            SELECT \(key) AS bucket, MIN(s.start), COUNT(*), MIN(s.value), AVG(s.value), MAX(s.value), SUM(s.value)
            FROM sample s WHERE \(conditions.joined(separator: " AND "))
            GROUP BY bucket ORDER BY MIN(s.start)
            """
        return try read { db in
            try Row.fetchAll(db, sql: sql, arguments: arguments).map { row in
                let (start, end) = Self.bounds(of: row, bucket: bucket)
                return StatisticsBucketValue(
                    start: start, end: end, count: row[2], minimum: row[3], average: row[4], maximum: row[5], sum: row[6])
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
