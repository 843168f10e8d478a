import HealthModel
import PostgresClient

/// One gateway's writing side of the central store: a connection as the gateway's own
/// PostgreSQL role, the gateway registered under its name, and batches applied each in one
/// transaction with the gateway's cursor for that type (`apply`). Used by one task at a time.
///
/// Row-level security lets this role change only rows of gateways registered to it; reading
/// other gateways' rows is what keeps a beat two gateways heard from being stored twice.
public final class CentralGateway {
    public let name: String
    /// The gateway's id in `hrmd.gateway`.
    public let id: Int32
    private let connection: PostgresConnection
    /// Central ids of sources and devices, and the device details last written: filled as
    /// batches commit, so a failed batch leaves nothing here that PostgreSQL does not hold.
    private var sources: [HealthSource: Int32] = [:]
    private var devices: [String: (id: Int32, details: HealthDevice)] = [:]
    /// The newest chunk per (type, key), as committed.
    private var openChunks: [OpenChunkKey: OpenChunk] = [:]

    private struct OpenChunkKey: Hashable {
        var type: SampleType
        var key: ChunkKey
    }

    /// Connects as `connection`'s role, brings the schema up to date when that role may,
    /// and registers the gateway `name` (or finds it registered to this role).
    public init(connection: PostgresConnection, name: String) throws(CentralStoreError) {
        self.connection = connection
        self.name = name
        try CentralSchemaSetup.prepare(connection)
        id = try CentralStoreError.running { () throws(PostgresError) -> Result<Int32, CentralStoreError> in
            _ = try connection.execute(
                "INSERT INTO hrmd.gateway (name) VALUES ($1) ON CONFLICT (name) DO NOTHING", [name])
            let row = try connection.execute("SELECT id, role FROM hrmd.gateway WHERE name = $1", [name])
            let role = row.string(0, 1) ?? ""
            guard role == connection.user else {
                return .failure(.gatewayTaken(name: name, role: role, connectedAs: connection.user))
            }
            return .success(Int32(try row.int64(0, 0)))
        }
    }

    /// The local anchor up to which this gateway's samples of `type` are in the central store.
    public func cursor(of type: SampleType) throws(CentralStoreError) -> Int64 {
        do {
            let row = try connection.execute(
                "SELECT anchor FROM hrmd.cursor WHERE gateway_id = $1 AND type = $2", [String(id), type.identifier])
            return row.rowCount == 0 ? 0 : try row.int64(0, 0)
        } catch {
            throw .postgres(error)
        }
    }

    /// Applies `batch` and moves the cursor from `batch.from` to `batch.to`, in one
    /// transaction: all of it or none. Throws `cursorMoved` (nothing applied) when the cursor
    /// is elsewhere.
    public func apply(_ batch: SyncBatch) throws(CentralStoreError) -> SyncOutcome {
        var writer = BatchWriter(gateway: id, type: batch.type, connection: connection,
                                 sources: sources, devices: devices, openChunks: [:])
        for (key, chunk) in openChunks where key.type == batch.type { writer.openChunks[key.key] = chunk }
        let outcome = try CentralStoreError.running { () throws(PostgresError) -> Result<SyncOutcome, CentralStoreError> in
            try connection.transaction { () throws(PostgresError) -> Result<SyncOutcome, CentralStoreError> in
                let cursor = try lockCursor(batch.type)
                guard cursor == batch.from else {
                    return .failure(.cursorMoved(type: batch.type.identifier, expected: batch.from, found: cursor))
                }
                var outcome = try writer.write(batch.added)
                outcome.deleted = try writer.delete(batch.deleted)
                _ = try connection.execute(
                    "SELECT hrmd.cursor_move($1, $2, $3)", [String(id), batch.type.identifier, String(batch.to)])
                if outcome.stored > 0 || outcome.deleted > 0 {
                    _ = try connection.execute("SELECT hrmd.gateway_touch($1)", [String(id)])
                    _ = try connection.execute("SELECT pg_notify($1, $2)", [CentralSchema.changesChannel, name])
                }
                return .success(outcome)
            }
        }
        sources = writer.sources
        devices = writer.devices
        for (key, chunk) in writer.openChunks { openChunks[OpenChunkKey(type: batch.type, key: key)] = chunk }
        return outcome
    }

    /// Runs `body` in one transaction that holds the cursor of `type` at `from` and moves it to
    /// `to` when `body` succeeds; `cursorMoved` (nothing done) when the cursor is elsewhere.
    /// `body` gets the connection and a way to the central id of a source; the ids it learns
    /// are kept only once the transaction commits.
    func inCursorTransaction<Outcome>(
        of type: SampleType, from: Int64, to: Int64,
        _ body: (PostgresConnection, (HealthSource) throws(PostgresError) -> Int32) throws(PostgresError) -> Outcome
    ) throws(CentralStoreError) -> Outcome {
        var learned = sources
        let sourceID = { (source: HealthSource) throws(PostgresError) -> Int32 in
            if let known = learned[source] { return known }
            let row = try self.connection.execute(
                "SELECT hrmd.source_id($1, $2)", [CentralText.storable(source.name), source.version.map(CentralText.storable)])
            let id = Int32(try row.int64(0, 0))
            learned[source] = id
            return id
        }
        let outcome = try CentralStoreError.running { () throws(PostgresError) -> Result<Outcome, CentralStoreError> in
            try connection.transaction { () throws(PostgresError) -> Result<Outcome, CentralStoreError> in
                let cursor = try lockCursor(type)
                guard cursor == from else { return .failure(.cursorMoved(type: type.identifier, expected: from, found: cursor)) }
                let outcome = try body(connection, sourceID)
                _ = try connection.execute("SELECT hrmd.cursor_move($1, $2, $3)", [String(id), type.identifier, String(to)])
                _ = try connection.execute("SELECT hrmd.gateway_touch($1)", [String(id)])
                _ = try connection.execute("SELECT pg_notify($1, $2)", [CentralSchema.changesChannel, name])
                return .success(outcome)
            }
        }
        sources = learned
        return outcome
    }

    /// The cursor of `type`, locked until the transaction ends (made at 0 the first time): the
    /// batch's hold on this gateway's rows of the type.
    private func lockCursor(_ type: SampleType) throws(PostgresError) -> Int64 {
        try connection.execute("SELECT hrmd.cursor_take($1, $2)", [String(id), type.identifier]).int64(0, 0)
    }

    /// Closes the connection.
    public func close() { connection.close() }
}
