import Foundation
import HealthModel
import PostgresClient
import Timestamps

/// What `hrmctl watch` reads: the changes gateways commit, and their notifications.
extension CentralReader {
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
                SELECT \(Self.syncedColumns), x.changed FROM hrmd.synced_owned x
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
}
