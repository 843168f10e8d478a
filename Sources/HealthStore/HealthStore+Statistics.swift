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
    /// value per non-empty bucket, oldest first (HKStatisticsCollectionQuery). A chunk that
    /// lies wholly inside one bucket counts by the summary its row carries; only chunks that
    /// straddle a bucket boundary or an end of the range are decoded.
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
            // A chunk stays in the UTC hour it starts in.
            var conditions = ["typeId = ?", "start >= ?", "start < ?", "last >= ?"]
            var arguments: StatementArguments = [type.storageID, SeriesBlobs.hour(of: from) * SeriesBlobs.hour, to, from]
            if let source {
                conditions.append("sourceId = (SELECT id FROM source WHERE name = ?)")
                _ = arguments.append(contentsOf: [source])
            }
            if let visible = try ReaderScope(reader: reader, type: type, db).condition(on: "sourceId") {
                conditions.append(visible.sql)
                _ = arguments.append(contentsOf: visible.arguments)
            }
            let matching = conditions.joined(separator: " AND ")
            guard let keys = try BucketKeys(bucket, matching: matching, arguments, db) else { return [] }
            var totals: [Int64: SeriesSummary] = [:]
            var straddling: [Int64] = []
            let summaries = try Row.fetchCursor(
                db, sql: "SELECT id, start, last, count, minimum, maximum, sum FROM series WHERE \(matching)", arguments: arguments)
            while let row = try summaries.next() {
                let start: Int64 = row[1], last: Int64 = row[2]
                let key = keys.key(ofMicroseconds: start)
                guard start >= from, last < to, keys.key(ofMicroseconds: last) == key else {
                    straddling.append(row[0])
                    continue
                }
                totals[key, default: SeriesSummary()].add(SeriesSummary(count: row[3], minimum: row[4], maximum: row[5], sum: row[6]))
            }
            var points = SeriesPoints()
            for id in straddling {
                guard let row = try Row.fetchOne(db, sql: "SELECT \(SeriesRow.columns) FROM series WHERE id = ?", arguments: [id])
                else { continue }
                try SeriesRow(row).points(into: &points)
                for index in points.firstIndex(startingAtOrAfter: from)..<points.firstIndex(startingAtOrAfter: to) {
                    totals[keys.key(ofMicroseconds: points.starts[index]), default: SeriesSummary()].add(points.values[index])
                }
            }
            return totals.keys.sorted().compactMap { key in
                guard let total = totals[key], total.count > 0, let (start, end) = keys.bounds(ofKey: key) else { return nil }
                return StatisticsBucketValue(
                    start: start, end: end, count: total.count, minimum: total.minimum,
                    average: total.sum / Double(total.count), maximum: total.maximum, sum: total.sum)
            }
        }
    }
}

/// How a time falls into a bucket: the bucket's key, and its bounds from the key.
private enum BucketKeys {
    /// Buckets of this many seconds; the key is the bucket's first second.
    case seconds(Int64)
    /// Calendar days; the key is the day's number since 1970-01-01.
    case days(ZoneDays)

    /// nil when no chunk matches.
    init?(_ bucket: StatisticsBucket, matching: String, _ arguments: StatementArguments, _ db: Database) throws {
        switch bucket {
        case .seconds(let width):
            self = .seconds(max(width, 1))
        case .days(let zone):
            // The zone's offsets are needed only where samples are.
            guard let row = try Row.fetchOne(db, sql: "SELECT MIN(start), MAX(last) FROM series WHERE \(matching)", arguments: arguments),
                  let first: Int64 = row[0], let last: Int64 = row[1]
            else { return nil }
            self = .days(ZoneDays(zone: zone, first: Self.floorDivide(first, 1_000_000), last: Self.floorDivide(last, 1_000_000)))
        }
    }

    @inline(__always)
    func key(ofMicroseconds time: Int64) -> Int64 {
        let second = Self.floorDivide(time, 1_000_000)
        switch self {
        case .seconds(let width): return Self.floorDivide(second, width) * width
        case .days(let days): return Self.floorDivide(second + days.offset(atSecond: second), 86_400)
        }
    }

    func bounds(ofKey key: Int64) -> (Timestamp, Timestamp)? {
        switch self {
        case .seconds(let width):
            return (Timestamp(microsecondsSinceEpoch: key * 1_000_000), Timestamp(microsecondsSinceEpoch: (key + width) * 1_000_000))
        case .days(let days):
            return days.bounds(ofDayNumber: key)
        }
    }

    @inline(__always)
    static func floorDivide(_ value: Int64, _ divisor: Int64) -> Int64 {
        let quotient = value / divisor
        return value % divisor < 0 ? quotient - 1 : quotient
    }
}
