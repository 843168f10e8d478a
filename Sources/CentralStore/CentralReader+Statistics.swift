import Foundation
import HealthModel
import PostgresClient
import Timestamps

/// Statistics per bucket, heart-rate variability and zones from the central store.
extension CentralReader {
    /// Count, minimum, average, maximum and sum of `type` per bucket over [since, until), one
    /// value per non-empty bucket, oldest first, as the local store's `statistics`: buckets of
    /// seconds are aligned to the epoch in UTC, `.days` are calendar days of the zone.
    ///
    /// One query, grouped in PostgreSQL: a chunk wholly inside one bucket and the range counts
    /// by its summary columns (its arrays are not read); a chunk that straddles a bucket
    /// boundary or an end of the range is unnested; samples under a sync identifier count in
    /// their highest version. Days are `date_trunc('day', …)` in the session's TimeZone, set
    /// to the zone.
    public func statistics(of type: SampleType, by bucket: StatisticsBucket, since: Timestamp? = nil, until: Timestamp? = nil)
        throws(CentralStoreError) -> [StatisticsBucketValue]
    {
        let from = since?.microsecondsSinceEpoch ?? Int64.min / 2
        let to = until?.microsecondsSinceEpoch ?? Int64.max / 2
        guard from < to else { return [] }
        let key: (String) -> String
        let end: String
        switch bucket {
        case .seconds(let width):
            let width = max(width, 1)
            key = { "(floor(\($0) / \(width * 1_000_000)::float8)::bigint * \(width))" }
            end = "b + \(width)"
        case .days(let zone):
            try setSessionZone(zone)
            key = { "extract(epoch FROM date_trunc('day', to_timestamp(\($0) / 1e6::float8)))::bigint" }
            end = "extract(epoch FROM to_timestamp(b) + interval '1 day')::bigint"
        }
        let lowerHour = since == nil ? from : ChunkRuns.hourOf(from) * ChunkRuns.hour
        let sql = """
            WITH c AS (
                SELECT id, first_start, last_start, count, minimum, maximum, sum,
                       \(key("first_start")) AS b0, \(key("last_start")) AS b1
                FROM hrmd.chunk
                WHERE type = $1 AND first_start >= $2 AND last_start >= $3 AND first_start < $4
            ), parts AS (
                SELECT b0 AS b, count::bigint AS n, minimum AS lo, maximum AS hi, sum AS total FROM c
                WHERE b0 = b1 AND first_start >= $3 AND last_start < $4
                UNION ALL
                SELECT \(key("u.s")), 1, u.v, u.v, u.v
                FROM c JOIN hrmd.chunk k ON k.id = c.id, unnest(k.starts, k.vals) AS u(s, v)
                WHERE NOT (c.b0 = c.b1 AND c.first_start >= $3 AND c.last_start < $4) AND u.s >= $3 AND u.s < $4
                UNION ALL
                SELECT \(key("x.start_time")), 1, x.value, x.value, x.value FROM \(Self.latestSynced) x
                WHERE x.start_time >= $3 AND x.start_time < $4
            )
            SELECT b, \(end), sum(n), min(lo), max(hi), sum(total) FROM parts GROUP BY b ORDER BY b
            LIMIT \(StatisticsBucket.maximumCount + 1)
            """
        return try Self.run { () throws(PostgresError) -> Result<[StatisticsBucketValue], CentralStoreError> in
            let rows = try connection.execute(sql, [type.identifier, String(lowerHour), String(from), String(to)])
            guard rows.rowCount <= StatisticsBucket.maximumCount else { return .failure(.analysisTooLarge(StatisticsBucket.tooManyBuckets)) }
            var buckets: [StatisticsBucketValue] = []
            buckets.reserveCapacity(rows.rowCount)
            for row in 0..<rows.rowCount {
                let count = try rows.int64(row, 2)
                let sum = try rows.double(row, 5)
                buckets.append(StatisticsBucketValue(
                    start: Timestamp(microsecondsSinceEpoch: try rows.int64(row, 0) * 1_000_000),
                    end: Timestamp(microsecondsSinceEpoch: try rows.int64(row, 1) * 1_000_000),
                    count: Int(count), minimum: try rows.double(row, 3), average: sum / Double(count),
                    maximum: try rows.double(row, 4), sum: sum))
            }
            return .success(buckets)
        }
    }

    /// Heart-rate variability of the RR intervals that start in the range (the model's
    /// computation over the samples in time order, streamed: memory stays flat whatever the
    /// range); nil without any. Refused with `analysisTooLarge` past
    /// ``HeartAnalysisBudget/samples`` intervals.
    public func heartRateVariability(since: Timestamp?, until: Timestamp?) throws(CentralStoreError) -> HeartRateVariability? {
        var accumulator = HeartRateVariability.Accumulator()
        var sequence = BeatInterval.Sequence()
        try enumerateWithinBudget(.rrInterval, since: since, until: until, "heart-rate variability") { point, contexts in
            let previous = sequence.next(
                device: contexts[point.context].device?.localIdentifier, start: point.start.microsecondsSinceEpoch,
                end: point.end.microsecondsSinceEpoch, milliseconds: point.value)
            accumulator.add(point.value, after: previous)
        }
        return accumulator.variability
    }

    /// Time in heart-rate zones over the range (the model's computation, streamed); empty
    /// without samples. Refused with `analysisTooLarge` past ``HeartAnalysisBudget/samples``.
    public func heartRateZones(since: Timestamp?, until: Timestamp?, maximumHeartRate: Double) throws(CentralStoreError)
        -> [HeartRateZones.Zone]
    {
        var accumulator = HeartRateZones.Accumulator(maximumHeartRate: maximumHeartRate)
        try enumerateWithinBudget(.heartRate, since: since, until: until, "heart-rate zones") { point, contexts in
            accumulator.add(point.value, at: point.start.secondsSinceEpoch, device: contexts[point.context].device?.localIdentifier ?? "")
        }
        return accumulator.isEmpty ? [] : accumulator.zones.zones
    }

    /// The samples of `type` in the range oldest first, all of them, refused past the budget.
    private func enumerateWithinBudget(
        _ type: SampleType, since: Timestamp?, until: Timestamp?, _ analysis: String, _ body: (StoredPoint, SampleContexts) -> Void
    ) throws(CentralStoreError) {
        let budget = HeartAnalysisBudget.samples
        var read = 0
        try enumeratePoints(SampleQuery(type: type, since: since, until: until, limit: budget + 1)) { point, contexts in
            read += 1
            if read <= budget { body(point, contexts) }
        }
        guard read <= budget else {
            throw .analysisTooLarge("\(analysis) reads at most \(budget) samples, and the range holds more: ask for a shorter range")
        }
    }
}
