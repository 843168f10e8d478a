import Foundation
import HealthModel
import PostgresClient
import Timestamps

/// hrmctl's reading side of the central store: samples, statistics, heart-rate variability
/// and zones, devices, sources and changes, over one connection, as the model's types
/// (docs/central-store.md, "Reading with hrmctl"). It never writes. Used by one task at a time.
///
/// A central sample's `id` is `sampleID(gateway:anchor:)`: the anchor the sample had in its
/// gateway's local store, shifted left by 16 bits, with the gateway's id in the low 16 bits.
/// It stays the same whatever happens to the chunk that holds the sample (appends, deletions
/// of other samples), and orders a gateway's samples as its local store did.
public final class CentralReader {
    public let connection: PostgresConnection
    /// The zone whose calendar days `.days` statistics use unless told another.
    public let timeZone: TimeZone
    /// The session's TimeZone setting, as last set.
    private var sessionZone: String?
    private var names = Names()

    /// Samples fetched per round trip are those of at most this many chunks.
    static let chunksPerFetch = 256

    /// Reads through `connection`; checks that the database holds an hrmd schema this hrmd can
    /// read, and sets the session's time zone to `timeZone`.
    public init(connection: PostgresConnection, timeZone: TimeZone = .current) throws(CentralStoreError) {
        self.connection = connection
        self.timeZone = timeZone
        try Self.run { () throws(PostgresError) -> Result<Void, CentralStoreError> in
            let schema = try connection.execute(
                "SELECT to_regclass('hrmd.chunk') IS NOT NULL AND to_regclass('hrmd.migration') IS NOT NULL")
            guard try schema.bool(0, 0) else { return .failure(.noCentralSchema(database: connection.database)) }
            let version = Int(try connection.execute("SELECT coalesce(max(version), 0) FROM hrmd.migration").int64(0, 0))
            if version > CentralSchema.currentVersion {
                return .failure(.schemaNewer(found: version, supported: CentralSchema.currentVersion))
            }
            return .success(())
        }
        try setSessionZone(timeZone)
    }

    /// The id of the sample a gateway stored at local anchor `anchor` (see the type's notes).
    public static func sampleID(gateway: Int32, anchor: Int64) -> Int64 {
        anchor << 16 | Int64(UInt16(truncatingIfNeeded: gateway))
    }

    // MARK: Samples

    /// Calls `body` with each sample of `query` (type, range on the start, source, device,
    /// limit, order) as a point with the contexts so far, ordered by start then id (newest
    /// first when the query asks). Reads chunks a page at a time.
    public func enumeratePoints(_ query: SampleQuery, _ body: (StoredPoint, SampleContexts) -> Void) throws(CentralStoreError) {
        let since = query.since?.microsecondsSinceEpoch ?? Int64.min / 2
        let until = query.until?.microsecondsSinceEpoch ?? Int64.max / 2
        guard since < until else { return }
        var remaining = query.limit ?? Int.max
        guard remaining > 0 else { return }
        try Self.run { () throws(PostgresError) -> Result<Void, CentralStoreError> in
            try names.load(connection)
            var contexts = ContextTable()
            var stream = MergeStream(newestFirst: query.newestFirst)
            let filter = Filter(query: query, since: since, until: until)
            // Samples under a sync identifier, in their highest version: few, read at once.
            var synced: [MergeStream.Item] = []
            let rows = try connection.execute(
                "SELECT \(Self.syncedColumns) FROM \(Self.latestSynced) x WHERE x.start_time >= $2 AND x.start_time < $3 \(filter.sql(4))",
                [query.type.identifier, String(since), String(until)] + filter.arguments)
            for row in 0..<rows.rowCount {
                synced.append(try syncedItem(rows, row, &contexts, type: query.type))
            }
            stream.add(synced)
            let emit = { (item: MergeStream.Item) -> Bool in
                guard remaining > 0 else { return false }
                remaining -= 1
                body(
                    StoredPoint(
                        id: item.id, start: Timestamp(microsecondsSinceEpoch: item.start),
                        end: Timestamp(microsecondsSinceEpoch: item.end), value: item.value, context: item.context),
                    contexts.shared)
                return remaining > 0
            }
            // Chunks in order of their first start, keyset-paged.
            let direction = query.newestFirst ? "DESC" : "ASC"
            let comparison = query.newestFirst ? "<" : ">"
            var after: (start: Int64, id: Int64)?
            var lowerHour = since
            if query.since != nil { lowerHour = ChunkRuns.hourOf(since) * ChunkRuns.hour }
            while true {
                var arguments: [String?] = [query.type.identifier, String(lowerHour), String(since), String(until)] + filter.arguments
                var page = ""
                if let after {
                    let first = arguments.count + 1
                    page = "AND (c.first_start, c.id) \(comparison) ($\(first)::bigint, $\(first + 1)::bigint)"
                    arguments += [String(after.start), String(after.id)]
                }
                let chunks = try connection.execute("""
                    SELECT \(Self.chunkColumns) FROM hrmd.chunk c
                    WHERE c.type = $1 AND c.first_start >= $2 AND c.last_start >= $3 AND c.first_start < $4 \(filter.sql(5)) \(page)
                    ORDER BY c.first_start \(direction), c.id \(direction) LIMIT \(Self.chunksPerFetch)
                    """, arguments)
                for row in 0..<chunks.rowCount {
                    let chunk = try ChunkRow(chunks, row)
                    guard stream.drain(beforeChunkAt: chunk.firstStart, emit) else { return .success(()) }
                    stream.add(try items(of: chunk, &contexts, type: query.type, since: since, until: until))
                    after = (chunk.firstStart, chunk.id)
                }
                if chunks.rowCount < Self.chunksPerFetch { break }
            }
            _ = stream.drain(beforeChunkAt: nil, emit)
            return .success(())
        }
    }

    /// Calls `body` with each sample of `query`, as `enumeratePoints` orders them.
    public func enumerateSamples(_ query: SampleQuery, _ body: (StoredSample) -> Void) throws(CentralStoreError) {
        try enumeratePoints(query) { point, contexts in body(StoredSample(point, type: query.type, contexts: contexts)) }
    }

    /// The samples of `query`, in memory.
    public func samples(_ query: SampleQuery) throws(CentralStoreError) -> [StoredSample] {
        var result: [StoredSample] = []
        try enumerateSamples(query) { result.append($0) }
        return result
    }

    // MARK: Statistics

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
            """
        return try Self.run { () throws(PostgresError) -> Result<[StatisticsBucketValue], CentralStoreError> in
            let rows = try connection.execute(sql, [type.identifier, String(lowerHour), String(from), String(to)])
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
    /// computation over the samples in time order); nil without any.
    public func heartRateVariability(since: Timestamp?, until: Timestamp?) throws(CentralStoreError) -> HeartRateVariability? {
        HeartRateVariability(intervals: try samples(SampleQuery(type: .rrInterval, since: since, until: until)).map(\.sample))
    }

    /// Time in heart-rate zones over the range (the model's computation); empty without samples.
    public func heartRateZones(since: Timestamp?, until: Timestamp?, maximumHeartRate: Double) throws(CentralStoreError)
        -> [HeartRateZones.Zone]
    {
        let rates = try samples(SampleQuery(type: .heartRate, since: since, until: until)).map(\.sample)
        guard !rates.isEmpty else { return [] }
        return HeartRateZones(samples: rates, maximumHeartRate: maximumHeartRate).zones
    }

    // MARK: Inventory

    /// Every device by identifier (one central record each, whichever gateway heard it), with
    /// its sample count over every type, the start of its latest sample, and that sample's
    /// location; ordered by identifier as bytes.
    public func deviceSummaries() throws(CentralStoreError) -> [DeviceSummary] {
        try Self.run { () throws(PostgresError) -> Result<[DeviceSummary], CentralStoreError> in
            let rows = try connection.execute("""
                WITH s AS (
                    SELECT device_id, count::bigint AS n, last_start AS t, sensor_location AS loc FROM hrmd.chunk
                    UNION ALL
                    SELECT device_id, 1, start_time, sensor_location FROM \(Self.latestSyncedAllTypes) x
                )
                SELECT d.identifier, d.name, d.manufacturer, d.model, d.hardware_version, d.firmware_version, d.software_version,
                       coalesce((SELECT sum(n) FROM s WHERE s.device_id = d.id), 0),
                       (SELECT max(t) FROM s WHERE s.device_id = d.id),
                       (SELECT loc FROM s WHERE s.device_id = d.id ORDER BY t DESC LIMIT 1)
                FROM hrmd.device d ORDER BY d.identifier COLLATE "C"
                """)
            var summaries: [DeviceSummary] = []
            for row in 0..<rows.rowCount {
                summaries.append(DeviceSummary(
                    device: HealthDevice(
                        localIdentifier: rows.string(row, 0) ?? "", name: rows.string(row, 1), manufacturer: rows.string(row, 2),
                        model: rows.string(row, 3), hardwareVersion: rows.string(row, 4), firmwareVersion: rows.string(row, 5),
                        softwareVersion: rows.string(row, 6)),
                    sampleCount: Int(try rows.int64(row, 7)),
                    lastSeen: rows.isNull(row, 8) ? nil : Timestamp(microsecondsSinceEpoch: try rows.int64(row, 8)),
                    lastLocation: rows.isNull(row, 9) ? nil : HeartRateSensorLocation(rawValue: try rows.int(row, 9))))
            }
            return .success(summaries)
        }
    }

    /// Every source with its sample count over every type and the start of its latest
    /// sample; ordered by name as bytes.
    public func sourceSummaries() throws(CentralStoreError) -> [SourceSummary] {
        try Self.run { () throws(PostgresError) -> Result<[SourceSummary], CentralStoreError> in
            let rows = try connection.execute("""
                WITH s AS (
                    SELECT source_id, count::bigint AS n, last_start AS t FROM hrmd.chunk
                    UNION ALL
                    SELECT source_id, 1, start_time FROM \(Self.latestSyncedAllTypes) x
                )
                SELECT r.name, r.version, coalesce(sum(s.n), 0), max(s.t)
                FROM hrmd.source r LEFT JOIN s ON s.source_id = r.id
                GROUP BY r.id ORDER BY r.name COLLATE "C"
                """)
            var summaries: [SourceSummary] = []
            for row in 0..<rows.rowCount {
                summaries.append(SourceSummary(
                    source: HealthSource(name: rows.string(row, 0) ?? "", version: rows.string(row, 1)),
                    sampleCount: Int(try rows.int64(row, 2)),
                    lastSample: rows.isNull(row, 3) ? nil : Timestamp(microsecondsSinceEpoch: try rows.int64(row, 3))))
            }
            return .success(summaries)
        }
    }

    // MARK: Changes

    /// Where a reader of changes of one type is: per gateway, the highest local anchor of its
    /// samples delivered and the highest tombstone delivered. A gateway's batches of one type
    /// commit one after the other in anchor order (its cursor), so everything it adds later
    /// has a higher anchor, and every tombstone a higher sequence number.
    public struct ChangePosition: Sendable, Equatable {
        public var type: SampleType
        public var anchors: [Int32: Int64] = [:]
        public var tombstones: [Int32: Int64] = [:]
    }

    /// The position after everything the store holds now of `type`.
    public func currentPosition(of type: SampleType) throws(CentralStoreError) -> ChangePosition {
        try Self.run { () throws(PostgresError) -> Result<ChangePosition, CentralStoreError> in
            let rows = try connection.execute("""
                SELECT g.id,
                       greatest((SELECT max(last_anchor) FROM hrmd.chunk WHERE gateway_id = g.id AND type = $1),
                                (SELECT max(anchor) FROM hrmd.synced_sample WHERE gateway_id = g.id AND type = $1), 0),
                       coalesce((SELECT max(seq) FROM hrmd.tombstone WHERE gateway_id = g.id AND type = $1), 0)
                FROM hrmd.gateway g
                """, [type.identifier])
            var position = ChangePosition(type: type)
            for row in 0..<rows.rowCount {
                let gateway = Int32(try rows.int64(row, 0))
                position.anchors[gateway] = try rows.int64(row, 1)
                position.tombstones[gateway] = try rows.int64(row, 2)
            }
            return .success(position)
        }
    }

    /// What was added and deleted after `position`, which moves past it: samples appended to
    /// chunks (those with a higher anchor than the gateway's delivered one), new versions of
    /// synced samples, and tombstones; the added in order of start then id. `anchor` of the
    /// change set is the highest change sequence number among them (0 when none).
    public func changes(after position: inout ChangePosition) throws(CentralStoreError) -> ChangeSet {
        let type = position.type
        return try Self.run { () throws(PostgresError) -> Result<ChangeSet, CentralStoreError> in
            try names.load(connection)
            let gateways = try connection.execute("SELECT id FROM hrmd.gateway")
            for row in 0..<gateways.rowCount {
                let gateway = Int32(try gateways.int64(row, 0))
                if position.anchors[gateway] == nil { position.anchors[gateway] = 0 }
                if position.tombstones[gateway] == nil { position.tombstones[gateway] = 0 }
            }
            let ids = position.anchors.keys.sorted()
            let anchors = ids.map { position.anchors[$0] ?? 0 }
            var contexts = ContextTable()
            var added: [MergeStream.Item] = []
            var highest: Int64 = 0
            var reached = position.anchors
            let chunks = try connection.execute("""
                SELECT \(Self.chunkColumns), c.changed FROM hrmd.chunk c
                JOIN unnest($2::integer[], $3::bigint[]) AS p(g, a) ON c.gateway_id = p.g
                WHERE c.type = $1 AND c.last_anchor > p.a
                """, [type.identifier, PostgresArrayLiteral.int32(ids), PostgresArrayLiteral.int64(anchors)])
            for row in 0..<chunks.rowCount {
                let chunk = try ChunkRow(chunks, row)
                highest = max(highest, try chunks.int64(row, ChunkRow.columnCount))
                let delivered = position.anchors[chunk.gateway] ?? 0
                let items = try self.items(of: chunk, &contexts, type: type, since: Int64.min, until: Int64.max, after: delivered)
                added += items
                reached[chunk.gateway] = max(reached[chunk.gateway] ?? 0, chunk.lastAnchor)
            }
            let synced = try connection.execute("""
                SELECT \(Self.syncedColumns), x.changed FROM hrmd.synced_sample x
                JOIN unnest($2::integer[], $3::bigint[]) AS p(g, a) ON x.gateway_id = p.g
                WHERE x.type = $1 AND x.anchor > p.a
                """, [type.identifier, PostgresArrayLiteral.int32(ids), PostgresArrayLiteral.int64(anchors)])
            for row in 0..<synced.rowCount {
                let item = try syncedItem(synced, row, &contexts, type: type)
                added.append(item)
                highest = max(highest, try synced.int64(row, Self.syncedColumnCount))
                let gateway = Int32(try synced.int64(row, 1))
                reached[gateway] = max(reached[gateway] ?? 0, try synced.int64(row, 12))
            }
            added.sort { ($0.start, $0.id) < ($1.start, $1.id) }
            let tombstoneIDs = position.tombstones.keys.sorted()
            let tombstoneSeqs = tombstoneIDs.map { position.tombstones[$0] ?? 0 }
            let tombstones = try connection.execute("""
                SELECT t.seq, t.gateway_id, t.anchor, s.name FROM hrmd.tombstone t
                JOIN hrmd.source s ON s.id = t.source_id
                JOIN unnest($2::integer[], $3::bigint[]) AS p(g, q) ON t.gateway_id = p.g
                WHERE t.type = $1 AND t.seq > p.q AND t.seq > $4
                ORDER BY t.seq
                """,
                [type.identifier, PostgresArrayLiteral.int32(tombstoneIDs), PostgresArrayLiteral.int64(tombstoneSeqs),
                 String(tombstoneSeqs.min() ?? 0)])
            var deleted: [DeletedSample] = []
            for row in 0..<tombstones.rowCount {
                let seq = try tombstones.int64(row, 0)
                let gateway = Int32(try tombstones.int64(row, 1))
                deleted.append(DeletedSample(
                    id: Self.sampleID(gateway: gateway, anchor: try tombstones.int64(row, 2)), type: type,
                    source: tombstones.string(row, 3) ?? "", anchor: seq))
                position.tombstones[gateway] = max(position.tombstones[gateway] ?? 0, seq)
                highest = max(highest, seq)
            }
            position.anchors = reached
            let shared = contexts.shared
            let samples = added.map { item in
                StoredSample(
                    StoredPoint(
                        id: item.id, start: Timestamp(microsecondsSinceEpoch: item.start),
                        end: Timestamp(microsecondsSinceEpoch: item.end), value: item.value, context: item.context),
                    type: type, contexts: shared)
            }
            return .success(ChangeSet(added: samples, deleted: deleted, anchor: highest))
        }
    }

    /// Subscribes to the notification a gateway's batch sends when it commits.
    public func listenForChanges() throws(CentralStoreError) {
        do { try connection.listen(CentralSchema.changesChannel) } catch { throw .postgres(error) }
    }

    /// Waits up to `timeout` for a gateway's commit to be notified; whether one was. Blocks
    /// the calling thread.
    public func awaitChanges(upTo timeout: Duration) throws(CentralStoreError) -> Bool {
        do { return try !connection.notifications(waitingUpTo: timeout).isEmpty } catch { throw .postgres(error) }
    }

    /// Closes the connection.
    public func close() { connection.close() }

    // MARK: Rows

    private func setSessionZone(_ zone: TimeZone) throws(CentralStoreError) {
        guard sessionZone != zone.identifier else { return }
        do {
            _ = try connection.execute("SELECT set_config('TimeZone', $1, false)", [zone.identifier])
        } catch {
            if case .server = error {
                throw .unknownTimeZone(zone.identifier)
            }
            throw .postgres(error)
        }
        sessionZone = zone.identifier
    }

    static let chunkColumns = """
        c.id, c.gateway_id, c.source_id, c.device_id, c.duration, c.sensor_location, c.sensor_contact, c.metadata, \
        c.first_start, c.last_anchor, c.starts, c.vals, c.anchors
        """

    static let syncedColumns = """
        x.id, x.gateway_id, x.source_id, x.device_id, x.sync_identifier, x.sync_version, x.start_time, x.end_time, \
        x.value, x.sensor_location, x.sensor_contact, x.metadata, x.anchor
        """
    static let syncedColumnCount = 13

    /// The samples under a sync identifier of type `$1`, each in its highest version (as the
    /// view `hrmd.samples` shows them).
    static let latestSynced = """
        (SELECT DISTINCT ON (source_id, sync_identifier) * FROM hrmd.synced_sample WHERE type = $1
         ORDER BY source_id, sync_identifier, sync_version DESC, id)
        """
    static let latestSyncedAllTypes = """
        (SELECT DISTINCT ON (source_id, sync_identifier) * FROM hrmd.synced_sample
         ORDER BY source_id, sync_identifier, sync_version DESC, id)
        """

    /// The samples of `chunk` that start in [since, until) with an anchor above `after`, as
    /// stream items (in the chunk's order: by start).
    private func items(
        of chunk: ChunkRow, _ contexts: inout ContextTable, type: SampleType, since: Int64, until: Int64, after: Int64 = Int64.min
    ) throws(PostgresError) -> [MergeStream.Item] {
        let context = contexts.number(
            gateway: names.gateways[chunk.gateway], source: names.source(chunk.source), device: chunk.device.map(names.device),
            metadata: chunk.metadata)
        var items: [MergeStream.Item] = []
        items.reserveCapacity(chunk.starts.count)
        for index in chunk.starts.indices {
            let start = chunk.starts[index]
            guard start >= since, start < until, index < chunk.anchors.count, index < chunk.values.count else { continue }
            let anchor = chunk.anchors[index]
            guard anchor > after else { continue }
            let value = chunk.values[index]
            let end = chunk.duration.map { start &+ $0 } ?? start &+ ChunkKey.beatMicroseconds(value)
            items.append(.init(
                start: start, end: end, id: Self.sampleID(gateway: chunk.gateway, anchor: anchor), value: value, context: context))
        }
        return items
    }

    private func syncedItem(_ rows: PostgresResult, _ row: Int, _ contexts: inout ContextTable, type: SampleType)
        throws(PostgresError) -> MergeStream.Item
    {
        let gateway = Int32(try rows.int64(row, 1))
        var metadata = ChunkRow.metadata(
            location: rows.isNull(row, 9) ? nil : try rows.int(row, 9), contact: rows.isNull(row, 10) ? nil : try rows.bool(row, 10),
            extra: rows.string(row, 11))
        metadata.syncIdentifier = rows.string(row, 4)
        metadata.syncVersion = Int(try rows.int64(row, 5))
        let context = contexts.number(
            gateway: names.gateways[gateway], source: names.source(Int32(try rows.int64(row, 2))),
            device: rows.isNull(row, 3) ? nil : names.device(Int32(try rows.int64(row, 3))), metadata: metadata)
        return .init(
            start: try rows.int64(row, 6), end: try rows.int64(row, 7), id: Self.sampleID(gateway: gateway, anchor: try rows.int64(row, 12)),
            value: try rows.double(row, 8), context: context)
    }

    /// Runs `body`, turning PostgreSQL's error into the store's.
    private static func run<T>(_ body: () throws(PostgresError) -> Result<T, CentralStoreError>) throws(CentralStoreError) -> T {
        let result: Result<T, CentralStoreError>
        do {
            result = try body()
        } catch {
            throw .postgres(error)
        }
        return try result.get()
    }
}

/// One row of `CentralReader.chunkColumns`, its arrays decoded.
private struct ChunkRow {
    static let columnCount = 13
    var id: Int64
    var gateway: Int32
    var source: Int32
    var device: Int32?
    var duration: Int64?
    var metadata: SampleMetadata
    var firstStart: Int64
    var lastAnchor: Int64
    var starts: [Int64]
    var values: [Double]
    var anchors: [Int64]

    init(_ rows: PostgresResult, _ row: Int) throws(PostgresError) {
        id = try rows.int64(row, 0)
        gateway = Int32(try rows.int64(row, 1))
        source = Int32(try rows.int64(row, 2))
        device = rows.isNull(row, 3) ? nil : Int32(try rows.int64(row, 3))
        duration = rows.isNull(row, 4) ? nil : try rows.int64(row, 4)
        metadata = Self.metadata(
            location: rows.isNull(row, 5) ? nil : try rows.int(row, 5), contact: rows.isNull(row, 6) ? nil : try rows.bool(row, 6),
            extra: rows.string(row, 7))
        firstStart = try rows.int64(row, 8)
        lastAnchor = try rows.int64(row, 9)
        starts = try rows.int64Elements(row, 10)
        values = try rows.doubleElements(row, 11)
        anchors = try rows.int64Elements(row, 12)
    }

    static func metadata(location: Int?, contact: Bool?, extra: String?) -> SampleMetadata {
        var decoded: [String: String] = [:]
        if let extra, let object = try? JSONDecoder().decode([String: String].self, from: Data(extra.utf8)) { decoded = object }
        return SampleMetadata(
            sensorLocation: location.flatMap(HeartRateSensorLocation.init(rawValue:)), sensorContact: contact, extra: decoded)
    }
}

/// The names behind the central ids: gateways, sources and devices, read once per query
/// (again only when a row names an id not yet known).
private struct Names {
    var gateways: [Int32: String] = [:]
    var sources: [Int32: HealthSource] = [:]
    var devices: [Int32: HealthDevice] = [:]

    mutating func load(_ connection: PostgresConnection) throws(PostgresError) {
        let gatewayRows = try connection.execute("SELECT id, name FROM hrmd.gateway")
        for row in 0..<gatewayRows.rowCount { gateways[Int32(try gatewayRows.int64(row, 0))] = gatewayRows.string(row, 1) }
        let sourceRows = try connection.execute("SELECT id, name, version FROM hrmd.source")
        for row in 0..<sourceRows.rowCount {
            sources[Int32(try sourceRows.int64(row, 0))] = HealthSource(name: sourceRows.string(row, 1) ?? "", version: sourceRows.string(row, 2))
        }
        let deviceRows = try connection.execute("""
            SELECT id, identifier, name, manufacturer, model, hardware_version, firmware_version, software_version FROM hrmd.device
            """)
        for row in 0..<deviceRows.rowCount {
            devices[Int32(try deviceRows.int64(row, 0))] = HealthDevice(
                localIdentifier: deviceRows.string(row, 1) ?? "", name: deviceRows.string(row, 2), manufacturer: deviceRows.string(row, 3),
                model: deviceRows.string(row, 4), hardwareVersion: deviceRows.string(row, 5), firmwareVersion: deviceRows.string(row, 6),
                softwareVersion: deviceRows.string(row, 7))
        }
    }

    func source(_ id: Int32) -> HealthSource { sources[id] ?? HealthSource(name: "unknown") }
    func device(_ id: Int32) -> HealthDevice { devices[id] ?? HealthDevice(localIdentifier: "unknown") }
}

/// The contexts of one query's samples, numbered as `SampleContexts` numbers them.
private struct ContextTable {
    private(set) var shared = SampleContexts()

    mutating func number(gateway: String?, source: HealthSource, device: HealthDevice?, metadata: SampleMetadata) -> Int {
        shared.index(of: SampleContext(source: source, device: device, metadata: metadata, gateway: gateway))
    }
}

/// Merges the samples of chunks read in order of their first starts (or in reverse) into one
/// stream ordered by (start, id), as the local store's `SampleStream` does: samples wait until
/// no chunk still to come can precede them (in start order, until the next chunk starts after
/// them; newest first, until they lie past the UTC hour of the next chunk, which a chunk never
/// leaves).
private struct MergeStream {
    struct Item {
        var start: Int64
        var end: Int64
        var id: Int64
        var value: Double
        var context: Int
    }

    let newestFirst: Bool
    private var buffer: [Item] = []
    private var head = 0

    init(newestFirst: Bool) { self.newestFirst = newestFirst }

    private func precedes(_ a: Item, _ b: Item) -> Bool {
        newestFirst ? (a.start, a.id) > (b.start, b.id) : (a.start, a.id) < (b.start, b.id)
    }

    mutating func drain(beforeChunkAt nextChunkStart: Int64?, _ emit: (Item) -> Bool) -> Bool {
        while head < buffer.count {
            let item = buffer[head]
            if let next = nextChunkStart {
                let final = newestFirst ? item.start >= (ChunkRuns.hourOf(next) + 1) * ChunkRuns.hour : item.start < next
                guard final else { break }
            }
            head += 1
            guard emit(item) else { return false }
        }
        if head == buffer.count {
            buffer.removeAll(keepingCapacity: true)
            head = 0
        }
        return true
    }

    /// Adds items in any order.
    mutating func add(_ added: [Item]) {
        guard !added.isEmpty else { return }
        var items = added
        items.sort { precedes($0, $1) }
        if head == buffer.count || precedes(buffer[buffer.count - 1], items[0]) {
            buffer += items
            return
        }
        var merged: [Item] = []
        merged.reserveCapacity(buffer.count - head + items.count)
        var (i, j) = (head, 0)
        while i < buffer.count || j < items.count {
            if j == items.count || (i < buffer.count && precedes(buffer[i], items[j])) {
                merged.append(buffer[i])
                i += 1
            } else {
                merged.append(items[j])
                j += 1
            }
        }
        buffer = merged
        head = 0
    }
}

/// What a sample query asks besides type and range, as SQL conditions on `c` or `x` columns
/// `source_id` and `device_id`.
private struct Filter {
    var conditions: [String] = []
    var arguments: [String?] = []

    init(query: SampleQuery, since: Int64, until: Int64) {
        if let source = query.source {
            conditions.append("source_id = (SELECT id FROM hrmd.source WHERE name = $%)")
            arguments.append(source)
        }
        if let device = query.device {
            conditions.append("device_id = (SELECT id FROM hrmd.device WHERE identifier = $%)")
            arguments.append(device)
        }
    }

    /// The conditions, each starting with AND, numbered from `$first`.
    func sql(_ first: Int) -> String {
        var number = first
        return conditions.map { condition in
            defer { number += 1 }
            return "AND " + condition.replacingOccurrences(of: "$%", with: "$\(number)")
        }.joined(separator: " ")
    }
}
