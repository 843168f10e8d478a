import HealthModel
import Foundation
import GRDB
import Timestamps


extension HealthStore {
    /// The samples of `type` added, and the ones deleted, after `anchor` (0 for the beginning),
    /// in change order, at most `limit` events (HKAnchoredObjectQuery, Health Connect's
    /// change tokens). Call again with the returned anchor until it returns nothing.
    ///
    /// `reader` is the program asking, as in `SampleQuery.reader`: without read authorization
    /// for the type it hears only of its own samples, added or deleted. Added samples made
    /// from an ANT+ page carry its beat stamp (`QuantitySample.antBeat`), which a sync to a
    /// central store needs to keep one copy of a beat that two gateways heard.
    public func changes(of type: SampleType, since anchor: Int64, limit: Int = 1000, reader: String? = nil)
        throws(HealthStoreError) -> ChangeSet
    {
        guard limit > 0 else { return ChangeSet(added: [], deleted: [], anchor: anchor) }
        return try read { db in
            let scope = try ReaderScope(reader: reader, type: type, db)
            let added = try Self.added(type, after: anchor, limit: limit, visible: scope.condition(on: "sourceId"), db)
            let deletedVisible = scope.condition(on: "t.sourceId")
            // Cached statements: a live reader asks this many times a second, and preparing a
            // statement again each time costs more than running it.
            let deleted = try Row.fetchAll(
                db.cachedStatement(sql: """
                    SELECT t.anchor, t.sampleId, s.name FROM deletedSample t JOIN source s ON s.id = t.sourceId
                    WHERE t.anchor > ? AND t.typeId = ?\(deletedVisible.map { " AND " + $0.sql } ?? "") ORDER BY t.anchor LIMIT ?
                    """),
                arguments: [anchor, type.storageID] + (deletedVisible?.arguments ?? []) + [limit]
            ).map { DeletedSample(id: $0[1], type: type, source: $0[2], anchor: $0[0]) }
            // Keep the first `limit` events of both lists in anchor order.
            var events: [(anchor: Int64, added: StoredSample?, deleted: DeletedSample?)] =
                added.map { ($0.id, $0, nil) } + deleted.map { ($0.anchor, nil, $0) }
            events.sort { $0.anchor < $1.anchor }
            events = Array(events.prefix(limit))
            var returned = events.compactMap(\.added)
            try ANTBeats.fill(&returned, db)
            return ChangeSet(added: returned, deleted: events.compactMap(\.deleted), anchor: events.last?.anchor ?? anchor)
        }
    }

    /// The first `limit` samples of `type` added after `anchor`, in anchor order. Chunks are
    /// visited by their first anchor, and the visit ends once `limit` samples are found that
    /// all come before the next chunk's first anchor.
    private static func added(
        _ type: SampleType, after anchor: Int64, limit: Int, visible: (sql: String, arguments: StatementArguments)?, _ db: Database
    ) throws -> [StoredSample] {
        let candidates = try Row.fetchAll(
            db.cachedStatement(sql: """
                SELECT id, firstAnchor FROM series
                WHERE typeId = ? AND lastAnchor > ?\(visible.map { " AND " + $0.sql } ?? "") ORDER BY firstAnchor
                """),
            arguments: [type.storageID, anchor] + (visible?.arguments ?? []))
        var contexts = ChunkContexts()
        var found: [SampleStream.Item] = []
        var points = SeriesPoints()
        for candidate in candidates {
            if found.count >= limit {
                found.sort { $0.anchor < $1.anchor }
                found.removeLast(found.count - limit)
                if (candidate[1] as Int64) > found[limit - 1].anchor { break }
            }
            guard let row = try Row.fetchOne(
                db.cachedStatement(sql: "SELECT \(SeriesRow.columns) FROM series WHERE id = ?"), arguments: [candidate[0] as Int64])
            else { continue }
            let chunk = SeriesRow(row)
            try chunk.points(into: &points)
            let context = try contexts.add(chunk, db)
            for index in 0..<points.count where points.anchors[index] > anchor {
                found.append(SampleStream.Item(
                    start: points.starts[index], anchor: points.anchors[index], value: points.values[index],
                    precededByGap: points.precededByGap[index], context: context))
            }
        }
        found.sort { $0.anchor < $1.anchor }
        return found.prefix(limit).map {
            contexts.sample(type: type, start: $0.start, value: $0.value, anchor: $0.anchor, context: $0.context)
        }
    }

    /// The anchor of the newest change: pass it to `changes` to hear only of what comes next.
    public func currentAnchor() throws(HealthStoreError) -> Int64 {
        try read { db in try AnchorSequence(db).last }
    }

    /// Deletes the samples of `type` written by `source` (and, when given, measured by the
    /// source's device with local identifier `device`) that start in [since, until), leaving
    /// tombstones; a source deletes only its own samples, as in HealthKit, and a manager names
    /// the source it deletes from. Returns the count; observers hear of it when it is not 0.
    @discardableResult
    public func deleteSamples(
        of type: SampleType, source: String, device: String? = nil, since: Timestamp? = nil, until: Timestamp? = nil
    ) throws(HealthStoreError) -> Int {
        try writeAnnouncing { db in
            // Chunks change here other than by saving: what saves remember of them is forgotten.
            writeCache.clear()
            guard let sourceID = try Int64.fetchOne(db, sql: "SELECT id FROM source WHERE name = ?", arguments: [source])
            else { return (0, nil) }
            let from = since?.microsecondsSinceEpoch ?? Int64.min
            let to = until?.microsecondsSinceEpoch ?? Int64.max
            guard from < to else { return (0, nil) }
            var condition = "typeId = ? AND sourceId = ? AND start < ? AND last >= ?"
            var arguments: StatementArguments = [type.storageID, sourceID, to, from]
            if let device {
                guard let deviceID = try Int64.fetchOne(
                    db, sql: "SELECT id FROM device WHERE sourceId = ? AND localIdentifier = ?", arguments: [sourceID, device])
                else { return (0, nil) }
                condition += " AND deviceId = ?"
                _ = arguments.append(contentsOf: [deviceID])
            }
            var removed: [Int64] = []
            var hours = HourSummaries()
            for row in try Row.fetchAll(db, sql: "SELECT \(SeriesRow.columns) FROM series WHERE \(condition)", arguments: arguments) {
                let chunk = SeriesRow(row)
                let ids = try Self.remove(startingIn: from, to, from: chunk, db)
                if !ids.isEmpty { hours.invalidate(typeID: chunk.key.typeID, sourceID: sourceID, start: chunk.start) }
                removed += ids
            }
            guard !removed.isEmpty else { return (0, nil) }
            try hours.write(db)
            try ANTBeats.remove(removed, db)
            var sequence = try AnchorSequence(db)
            var changes = ChangeCollector()
            for deleted in try Tombstones.record(removed, type: type, sourceID: sourceID, sequence: &sequence, db) {
                changes.recordDeleted(DeletedSample(id: deleted.id, type: type, source: source, anchor: deleted.anchor))
            }
            try sequence.save(db)
            return (removed.count, changes)
        }
    }

    /// Removes the samples of `chunk` that start in [from, to), rewriting it around them (or
    /// deleting it when none is left); returns their ids. In a heartbeat series the beat
    /// after a removed one is then preceded by a gap.
    private static func remove(startingIn from: Int64, _ to: Int64, from chunk: SeriesRow, _ db: Database) throws -> [Int64] {
        let points = try chunk.points()
        let first = points.firstIndex(startingAtOrAfter: from)
        let end = points.firstIndex(startingAtOrAfter: to)
        guard first < end else { return [] }
        var kept = points.selecting(Array(0..<first) + Array(end..<points.count))
        if chunk.shape.span == .beat, first < kept.count { kept.precededByGap[first] = true }
        try SeriesTable.rewrite(chunk.id, points: kept, db)
        return Array(points.anchors[first..<end])
    }
}

/// The store's one change counter (table `anchorSequence`), read once and written once per
/// transaction: new sample ids and tombstone anchors are taken from it in order.
struct AnchorSequence {
    var last: Int64

    init(_ db: Database) throws {
        last = try Int64.fetchOne(db.cachedStatement(sql: "SELECT lastAnchor FROM anchorSequence WHERE id = 1")) ?? 0
    }

    func save(_ db: Database) throws {
        try db.cachedStatement(sql: "UPDATE anchorSequence SET lastAnchor = ? WHERE id = 1").execute(arguments: [last])
    }
}

extension HealthStore {
    /// The anchor of the newest change of `type` that `reader` may see (as in `changes`): 0
    /// when it may see none. What an application starts following changes from, without
    /// learning how much the store holds that it may not read.
    public func latestAnchor(of type: SampleType, reader: String?) throws(HealthStoreError) -> Int64 {
        try read { db in
            let scope = try ReaderScope(reader: reader, type: type, db)
            // Both tables name the source in `sourceId`: one condition serves both halves.
            let visible = scope.condition(on: "sourceId")
            let condition = visible.map { " AND " + $0.sql } ?? ""
            let arguments = [type.storageID] + (visible?.arguments ?? [])
            return try Int64.fetchOne(
                db,
                sql: """
                    SELECT MAX(anchor) FROM (
                        SELECT MAX(lastAnchor) AS anchor FROM series WHERE typeId = ?\(condition)
                        UNION ALL
                        SELECT MAX(anchor) FROM deletedSample WHERE typeId = ?\(condition))
                    """,
                arguments: arguments + arguments) ?? 0
        }
    }

    /// The store's 16-byte secret (made with the store): the key of the tokens the store
    /// service gives applications for sample ids and anchors. Only the store's owner can read it.
    public func serviceSecret() throws(HealthStoreError) -> [UInt8] {
        try read { db in
            guard let secret = try Data.fetchOne(db, sql: "SELECT secret FROM serviceSecret WHERE id = 1"), secret.count == 16 else {
                throw HealthStoreError.damaged(path: path ?? ":memory:", reason: "the service secret is missing")
            }
            return Array(secret)
        }
    }
}
