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
    var sessionZone: String?
    var names = Names()

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

    /// Closes the connection.
    public func close() { connection.close() }

    // MARK: Rows

    func setSessionZone(_ zone: TimeZone) throws(CentralStoreError) {
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

    /// The samples under a sync identifier of type `$1`, each in its highest version from the
    /// gateway that wrote the identifier first (as the view `hrmd.samples` shows them).
    static let latestSynced = """
        (SELECT DISTINCT ON (source_id, sync_identifier) * FROM hrmd.synced_owned WHERE type = $1
         ORDER BY source_id, sync_identifier, sync_version DESC, id)
        """
    static let latestSyncedAllTypes = """
        (SELECT DISTINCT ON (source_id, sync_identifier) * FROM hrmd.synced_owned
         ORDER BY source_id, sync_identifier, sync_version DESC, id)
        """

    /// The samples of `chunk` that start in [since, until) with an anchor above `after`, as
    /// stream items (in the chunk's order: by start).
    func items(
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
            let end = chunk.duration.map { start &+ $0 } ?? start &+ BeatInterval.microseconds(value)
            items.append(.init(
                start: start, end: end, id: Self.sampleID(gateway: chunk.gateway, anchor: anchor), value: value, context: context))
        }
        return items
    }

    func syncedItem(_ rows: PostgresResult, _ row: Int, _ contexts: inout ContextTable, type: SampleType)
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
    static func run<T>(_ body: () throws(PostgresError) -> Result<T, CentralStoreError>) throws(CentralStoreError) -> T {
        try CentralStoreError.running(body)
    }
}

