import Foundation
import GRDB
import Timestamps

/// A sample that was deleted, as an anchored query reports it (HKDeletedObject).
public struct DeletedSample: Sendable, Hashable {
    /// The id the sample had.
    public var id: Int64
    public var type: SampleType
    public var source: String
    /// Where the deletion sits in the change sequence.
    public var anchor: Int64

    public init(id: Int64, type: SampleType, source: String, anchor: Int64) {
        self.id = id
        self.type = type
        self.source = source
        self.anchor = anchor
    }
}

/// What changed after an anchor: added samples and deletions, and the anchor to ask from next.
public struct ChangeSet: Sendable {
    public var added: [StoredSample]
    public var deleted: [DeletedSample]
    /// Pass this to the next `changes` call; it covers everything returned here.
    public var anchor: Int64

    public init(added: [StoredSample], deleted: [DeletedSample], anchor: Int64) {
        self.added = added
        self.deleted = deleted
        self.anchor = anchor
    }
}

extension HealthStore {
    /// The samples of `type` added, and the ones deleted, after `anchor` (0 for the beginning),
    /// in change order, at most `limit` events (HKAnchoredObjectQuery, Health Connect's
    /// change tokens). Call again with the returned anchor until it returns nothing.
    ///
    /// `reader` is the program asking, as in `SampleQuery.reader`: without read authorization
    /// for the type it hears only of its own samples, added or deleted.
    public func changes(of type: SampleType, since anchor: Int64, limit: Int = 1000, reader: String? = nil)
        throws(HealthStoreError) -> ChangeSet
    {
        try read { db in
            let scope = try ReaderScope(reader: reader, type: type, db)
            let addedVisible = scope.condition(on: "s.sourceId")
            let addedRows = try Row.fetchAll(
                db,
                sql: """
                    SELECT \(SampleRow.columns) FROM sample s
                    WHERE s.id > ? AND s.typeId = ?\(addedVisible.map { " AND " + $0.sql } ?? "") ORDER BY s.id LIMIT ?
                    """,
                arguments: [anchor, type.storageID] + (addedVisible?.arguments ?? []) + [limit])
            var decoder = SampleRow()
            let added = try addedRows.map { try decoder.decode($0, type: type, db) }
            let deletedVisible = scope.condition(on: "t.sourceId")
            let deleted = try Row.fetchAll(
                db,
                sql: """
                    SELECT t.anchor, t.sampleId, s.name FROM deletedSample t JOIN source s ON s.id = t.sourceId
                    WHERE t.anchor > ? AND t.typeId = ?\(deletedVisible.map { " AND " + $0.sql } ?? "") ORDER BY t.anchor LIMIT ?
                    """,
                arguments: [anchor, type.storageID] + (deletedVisible?.arguments ?? []) + [limit]
            ).map { DeletedSample(id: $0[1], type: type, source: $0[2], anchor: $0[0]) }
            // Keep the first `limit` events of both lists in anchor order.
            var events: [(anchor: Int64, added: StoredSample?, deleted: DeletedSample?)] =
                added.map { ($0.id, $0, nil) } + deleted.map { ($0.anchor, nil, $0) }
            events.sort { $0.anchor < $1.anchor }
            events = Array(events.prefix(limit))
            return ChangeSet(
                added: events.compactMap(\.added), deleted: events.compactMap(\.deleted),
                anchor: events.last?.anchor ?? anchor)
        }
    }

    /// The anchor of the newest change: pass it to `changes` to hear only of what comes next.
    public func currentAnchor() throws(HealthStoreError) -> Int64 {
        try read { db in try AnchorSequence(db).last }
    }

    /// Deletes the samples of `type` written by `source` (and, when given, measured by the
    /// device with local identifier `device`) that start in [since, until), leaving
    /// tombstones; a source deletes only its own samples, as in HealthKit, and a manager names
    /// the source it deletes from. Returns the count; observers hear of it when it is not 0.
    @discardableResult
    public func deleteSamples(
        of type: SampleType, source: String, device: String? = nil, since: Timestamp? = nil, until: Timestamp? = nil
    ) throws(HealthStoreError) -> Int {
        try writeAnnouncing { db in
            guard let sourceID = try Int64.fetchOne(db, sql: "SELECT id FROM source WHERE name = ?", arguments: [source])
            else { return (0, nil) }
            var condition = "typeId = ? AND sourceId = ? AND start >= ? AND start < ?"
            var arguments: StatementArguments = [
                type.storageID, sourceID, since?.microsecondsSinceEpoch ?? Int64.min,
                until?.microsecondsSinceEpoch ?? Int64.max,
            ]
            if let device {
                guard let deviceID = try Int64.fetchOne(
                    db, sql: "SELECT id FROM device WHERE localIdentifier = ?", arguments: [device])
                else { return (0, nil) }
                condition += " AND deviceId = ?"
                _ = arguments.append(contentsOf: [deviceID])
            }
            let count = try Self.deleteWithTombstones(where: condition, arguments: arguments, db)
            var changes = ChangeCollector()
            if count > 0 { changes.record(type, source: source) }
            return (count, try pendingChange(changes, db))
        }
    }

    /// Moves the samples matching `condition` to tombstones whose anchors continue the anchor
    /// sequence, then deletes them. Returns how many.
    static func deleteWithTombstones(where condition: String, arguments: StatementArguments, _ db: Database) throws -> Int {
        var sequence = try AnchorSequence(db)
        let now = Int64(Date().timeIntervalSince1970 * 1_000_000)
        try db.execute(
            sql: """
                INSERT INTO deletedSample (anchor, sampleId, typeId, sourceId, deletedAt)
                SELECT ? + ROW_NUMBER() OVER (ORDER BY id), id, typeId, sourceId, ?
                FROM sample WHERE \(condition)
                """,
            arguments: [sequence.last, now] + arguments)
        let count = db.changesCount
        guard count > 0 else { return 0 }
        sequence.last += Int64(count)
        try sequence.save(db)
        try MinuteRollups.recompute(where: condition, arguments: arguments, db) {
            try db.execute(sql: "DELETE FROM sample WHERE \(condition)", arguments: arguments)
        }
        return count
    }
}

/// The store's one change counter (table `anchorSequence`), read once and written once per
/// transaction: new sample ids and tombstone anchors are taken from it in order.
struct AnchorSequence {
    var last: Int64

    init(_ db: Database) throws {
        last = try Int64.fetchOne(db, sql: "SELECT lastAnchor FROM anchorSequence WHERE id = 1") ?? 0
    }

    func save(_ db: Database) throws {
        try db.execute(sql: "UPDATE anchorSequence SET lastAnchor = ? WHERE id = 1", arguments: [last])
    }
}
