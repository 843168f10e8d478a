import HealthModel
import Foundation
import GRDB
import Timestamps


extension HealthStore {
    /// Count, minimum, average, maximum and sum of `type` per bucket over [since, until), one
    /// value per non-empty bucket, oldest first (HKStatisticsCollectionQuery). Whole UTC hours
    /// count by their summaries when buckets are made of whole hours; elsewhere a chunk that
    /// lies wholly inside one bucket counts by the summary its row carries, and only chunks
    /// that straddle a bucket boundary or an end of the range are decoded.
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
            var sources: [(sql: String, arguments: StatementArguments)] = []
            if let source { sources.append(("sourceId = (SELECT id FROM source WHERE name = ?)", [source])) }
            if let visible = try ReaderScope(reader: reader, type: type, db).condition(on: "sourceId") { sources.append(visible) }
            let everything = Self.chunkCondition(type, from: from, to: to, sources)
            guard let keys = try BucketKeys(bucket, matchingAny: [everything], db) else { return [] }
            var totals: [Int64: SeriesSummary] = [:]
            // Whole UTC hours from their summaries when no bucket boundary falls inside an hour;
            // the chunks of the partial hours at the ends (or of everything, otherwise).
            var chunkRanges = [(from, to)]
            let firstHour = SeriesBlobs.hour(of: from - 1) + 1, endHour = SeriesBlobs.hour(of: to)
            if keys.hourAligned, firstHour < endHour {
                var sql = "SELECT hour, SUM(count), MIN(minimum), MAX(maximum), SUM(sum) FROM hourSummary WHERE typeId = ? AND hour >= ? AND hour < ?"
                var arguments: StatementArguments = [type.storageID, firstHour, endHour]
                for condition in sources {
                    sql += " AND " + condition.sql
                    _ = arguments.append(contentsOf: condition.arguments)
                }
                for row in try Row.fetchAll(db, sql: sql + " GROUP BY hour", arguments: arguments) {
                    let hour: Int64 = row[0]
                    totals[keys.key(ofMicroseconds: hour * SeriesBlobs.hour), default: SeriesSummary()]
                        .add(SeriesSummary(count: row[1], minimum: row[2], maximum: row[3], sum: row[4]))
                }
                chunkRanges = [(from, firstHour * SeriesBlobs.hour), (endHour * SeriesBlobs.hour, to)]
            }
            try Self.checkBucketBudget(totals)
            for (low, high) in chunkRanges where low < high {
                try Self.addChunks(Self.chunkCondition(type, from: low, to: high, sources), from: low, to: high, keys, &totals, db)
            }
            return Self.values(totals, keys)
        }
    }

    /// The same statistics over the samples each query selects (its type, range and device:
    /// a person's straps over their assignments), added into one set of buckets. The queries must not overlap. No hour summary holds one
    /// device, so every chunk counts by its row's summary or, straddling a boundary, decoded.
    public func statistics(_ queries: [SampleQuery], by bucket: StatisticsBucket) throws(HealthStoreError) -> [StatisticsBucketValue] {
        try read { db in
            var parts: [(condition: (sql: String, arguments: StatementArguments), from: Int64, to: Int64)] = []
            for query in queries {
                let from = query.since?.microsecondsSinceEpoch ?? Int64.min / 2
                let to = query.until?.microsecondsSinceEpoch ?? Int64.max / 2
                guard from < to else { continue }
                parts.append((Self.chunkCondition(query.type, from: from, to: to, query.device.map { [Self.deviceCondition($0)] } ?? []), from, to))
            }
            guard let keys = try BucketKeys(bucket, matchingAny: parts.map(\.condition), db) else { return [] }
            var totals: [Int64: SeriesSummary] = [:]
            for part in parts {
                try Self.addChunks(part.condition, from: part.from, to: part.to, keys, &totals, db)
            }
            return Self.values(totals, keys)
        }
    }

    /// The non-empty buckets of `totals`, oldest first.
    private static func values(_ totals: [Int64: SeriesSummary], _ keys: BucketKeys) -> [StatisticsBucketValue] {
        totals.keys.sorted().compactMap { key in
            guard let total = totals[key], total.count > 0, let (start, end) = keys.bounds(ofKey: key) else { return nil }
            return StatisticsBucketValue(
                start: start, end: end, count: total.count, minimum: total.minimum,
                average: total.sum / Double(total.count), maximum: total.maximum, sum: total.sum)
        }
    }

    /// Refuses totals past ``StatisticsBucket/maximumCount`` buckets, checked as they grow.
    private static func checkBucketBudget(_ totals: [Int64: SeriesSummary]) throws(HealthStoreError) {
        guard totals.count <= StatisticsBucket.maximumCount else { throw .limitReached(StatisticsBucket.tooManyBuckets) }
    }

    /// The chunks of `type` holding samples that start in [from, to), of the sources allowed.
    private static func chunkCondition(
        _ type: SampleType, from: Int64, to: Int64, _ sources: [(sql: String, arguments: StatementArguments)]
    ) -> (sql: String, arguments: StatementArguments) {
        // A chunk stays in the UTC hour it starts in.
        var sql = "typeId = ? AND start >= ? AND start < ? AND last >= ?"
        var arguments: StatementArguments = [type.storageID, SeriesBlobs.hour(of: from) * SeriesBlobs.hour, to, from]
        for condition in sources {
            sql += " AND " + condition.sql
            _ = arguments.append(contentsOf: condition.arguments)
        }
        return (sql, arguments)
    }

    /// Adds the samples in [from, to) of the chunks `matching` selects to their buckets: a
    /// chunk wholly inside one bucket by its row's summary, the others decoded.
    private static func addChunks(
        _ matching: (sql: String, arguments: StatementArguments), from: Int64, to: Int64, _ keys: BucketKeys,
        _ totals: inout [Int64: SeriesSummary], _ db: Database
    ) throws {
        var straddling: [Int64] = []
        let summaries = try Row.fetchCursor(
            db, sql: "SELECT id, start, last, count, minimum, maximum, sum FROM series WHERE \(matching.sql)", arguments: matching.arguments)
        while let row = try summaries.next() {
            let start: Int64 = row[1], last: Int64 = row[2]
            let key = keys.key(ofMicroseconds: start)
            guard start >= from, last < to, keys.key(ofMicroseconds: last) == key else {
                straddling.append(row[0])
                continue
            }
            totals[key, default: SeriesSummary()].add(SeriesSummary(count: row[3], minimum: row[4], maximum: row[5], sum: row[6]))
            try Self.checkBucketBudget(totals)
        }
        var points = SeriesPoints()
        for id in straddling {
            guard let row = try Row.fetchOne(db, sql: "SELECT \(SeriesRow.columns) FROM series WHERE id = ?", arguments: [id])
            else { continue }
            try SeriesRow(row).points(into: &points)
            for index in points.firstIndex(startingAtOrAfter: from)..<points.firstIndex(startingAtOrAfter: to) {
                totals[keys.key(ofMicroseconds: points.starts[index]), default: SeriesSummary()].add(points.values[index])
            }
            try Self.checkBucketBudget(totals)
        }
    }
}

/// How a time falls into a bucket: the bucket's key, and its bounds from the key.
private enum BucketKeys {
    /// Buckets of this many seconds; the key is the bucket's first second.
    case seconds(Int64)
    /// Calendar days; the key is the day's number since 1970-01-01.
    case days(ZoneDays)

    /// The keys of the chunks any of `conditions` selects (one per range: a person's straps
    /// each take one per assignment, asked one by one rather than as one deep OR); nil when
    /// no chunk matches.
    init?(_ bucket: StatisticsBucket, matchingAny conditions: [(sql: String, arguments: StatementArguments)], _ db: Database) throws {
        switch bucket {
        case .seconds(let width):
            self = .seconds(max(width, 1))
        case .days(let zone):
            // The zone's offsets are needed only where samples are.
            // The first and last chunk by start, each one step through index seriesByTime; the
            // last chunk ends within the hour it starts in.
            var first: Int64?
            var lastStart: Int64?
            for (matching, arguments) in conditions {
                if let start = try Int64.fetchOne(db, sql: "SELECT start FROM series WHERE \(matching) ORDER BY start LIMIT 1", arguments: arguments) {
                    first = min(first ?? start, start)
                }
                if let start = try Int64.fetchOne(db, sql: "SELECT start FROM series WHERE \(matching) ORDER BY start DESC LIMIT 1", arguments: arguments) {
                    lastStart = max(lastStart ?? start, start)
                }
            }
            guard let first, let lastStart else { return nil }
            let last = (SeriesBlobs.hour(of: lastStart) + 1) * SeriesBlobs.hour - 1
            self = .days(ZoneDays(zone: zone, first: Self.floorDivide(first, 1_000_000), last: Self.floorDivide(last, 1_000_000)))
        }
    }

    /// Whether every bucket boundary falls on a whole UTC hour.
    var hourAligned: Bool {
        switch self {
        case .seconds(let width): width % 3600 == 0
        case .days(let days): days.offsets.allSatisfy { $0 % 3600 == 0 } && days.changes.allSatisfy { $0 % 3600 == 0 }
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
