import GRDB
import HealthModel
import Timestamps

/// An event deleted: its id, type, source and strap, as its tombstone keeps them.
public struct DeletedEvent: Sendable, Hashable {
    public var id: String
    public var type: SampleType
    public var source: String
    public var device: String?

    public init(id: String, type: SampleType, source: String, device: String?) {
        self.id = id
        self.type = type
        self.source = source
        self.device = device
    }

    /// The tombstone of `event`.
    public init(_ event: HealthEvent) {
        self.init(id: event.id, type: event.type, source: event.source, device: event.device)
    }
}

/// Events saved or deleted after an anchor, as ``HealthStore/eventChanges(of:since:through:limit:)`` reads them.
public struct EventChangeSet: Sendable {
    /// The events as saved, oldest save first.
    public var events: [HealthEvent]
    /// The events deleted, by id, with their type, oldest deletion first.
    public var deleted: [DeletedEvent] = []
    /// The anchor of the last save read: where the next read starts.
    public var anchor: Int64
}

/// Events (table `healthEvent`): HealthKit's category samples. Each save of an event (its
/// opening, an extension, its end) takes a new anchor from the store's one sequence and is
/// announced with the other changes. Only the source ``HealthSource/eventWriter`` writes them,
/// with share authorization of their type as any sample; a reader sees its own and, with
/// read authorization of a type, every source's events of it.
extension HealthStore {
    /// Stores `event`, new or changed (an open event extended or closed: same id, same source,
    /// type, strap and start); saving it as it is stored changes nothing. Refused when its source
    /// may not share its type, when it is not ``HealthSource/eventWriter``, or when its strap has
    /// another open event of the type.
    public func saveEvent(_ event: HealthEvent) throws(HealthStoreError) {
        if let problem = event.problem { throw .conflict(problem) }
        try writeAnnouncing { db in
            var changes = ChangeCollector()
            var known = EventWriteLookups()
            if try Self.write(event, db, &known) { changes.recordEvent(event) }
            return ((), changes)
        }
    }

    /// Stores `events` in order in one transaction, each as ``saveEvent(_:)`` would: what one
    /// event's refusal (its type not shared, a conflict) leaves out is that event's outcome, and
    /// the others are stored; a failure of the store itself stores none and throws.
    public func saveEvents(_ events: [HealthEvent]) throws(HealthStoreError) -> [Result<Void, HealthStoreError>] {
        guard !events.isEmpty else { return [] }
        return try writeAnnouncing { db in
            var changes = ChangeCollector()
            var outcomes: [Result<Void, HealthStoreError>] = []
            var known = EventWriteLookups()
            for event in events {
                if let problem = event.problem {
                    outcomes.append(.failure(.conflict(problem)))
                    continue
                }
                do {
                    if try Self.write(event, db, &known) { changes.recordEvent(event) }
                    outcomes.append(.success(()))
                } catch let refusal as HealthStoreError {
                    outcomes.append(.failure(refusal))
                }
            }
            return (outcomes, changes)
        }
    }

    /// Writes one checked event inside the caller's transaction; false when it was stored as it
    /// is. Throws a `HealthStoreError` for an event refused (the transaction may go on), any
    /// other error for a failure of the store.
    private static func write(_ event: HealthEvent, _ db: Database, _ known: inout EventWriteLookups) throws -> Bool {
        guard event.type.mayBeShared(by: event.source) else {
            throw HealthStoreError.conflict("\(event.type.identifier) events are written by \(HealthSource.eventWriter) alone")
        }
        let sourceID = try known.sourceID(event.source, db)
        guard try known.mayShare(sourceID, event.type, db) else {
            throw HealthStoreError.shareNotAuthorized(source: event.source, types: [event.type.identifier])
        }
        let stored = try Row.fetchOne(db.cachedStatement(sql: "\(selectEvents) WHERE e.uuid = ?"), arguments: [event.id]).flatMap(Self.event)
        // Saved as it is already (a recording replayed again): nothing changes.
        if stored == event { return false }
        if let stored {
            guard stored.type == event.type, stored.source == event.source, stored.device == event.device, stored.start == event.start
            else { throw HealthStoreError.conflict("the event \(event.id) is another event; only its end, latest reading and extreme change") }
        } else if event.isOpen,
            let open = try String.fetchOne(
                db.cachedStatement(sql: #"SELECT uuid FROM healthEvent WHERE typeId = ? AND sourceId = ? AND device IS ? AND "end" IS NULL"#),
                arguments: [event.type.storageID, sourceID, event.device])
        {
            throw HealthStoreError.conflict(
                "\(event.device ?? "the strap") has an open \(event.type.identifier) event already (\(open)); close it first")
        }
        // Checked: from here on only the store itself can fail.
        var anchors = try AnchorSequence(db)
        anchors.last += 1
        try anchors.save(db)
        if stored != nil {
            try db.cachedStatement(sql: #"UPDATE healthEvent SET anchor = ?, latest = ?, "end" = ?, extreme = ?, person = ? WHERE uuid = ?"#)
                .execute(arguments: [
                    anchors.last, event.latest.microsecondsSinceEpoch, event.end?.microsecondsSinceEpoch, event.extreme, event.person,
                    event.id,
                ])
        } else {
            try db.cachedStatement(sql: """
                INSERT INTO healthEvent (uuid, anchor, typeId, sourceId, device, person, start, latest, "end", threshold, extreme)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """)
                .execute(arguments: [
                    event.id, anchors.last, event.type.storageID, sourceID, event.device, event.person,
                    event.start.microsecondsSinceEpoch, event.latest.microsecondsSinceEpoch, event.end?.microsecondsSinceEpoch,
                    event.threshold, event.extreme,
                ])
        }
        return true
    }

    /// Deletes event `id`, leaving a tombstone, and returns it as it was; throws `conflict`
    /// when there is none, or when it is still open (hrmd is still following it: it can go
    /// once it ended). Only the store's owner or a manager deletes events: the requests check
    /// who asks.
    @discardableResult
    public func deleteEvent(_ id: String) throws(HealthStoreError) -> HealthEvent {
        try writeAnnouncing { db in
            guard let event = try Self.storedEvent(id, db) else { throw HealthStoreError.conflict("no event \(id.debugDescription)") }
            guard !event.isOpen else {
                throw HealthStoreError.conflict("the event \(id) is still open; it can be deleted once it has ended")
            }
            let sourceID = try Self.upsertSource(HealthSource(name: event.source), db)
            var anchors = try AnchorSequence(db)
            anchors.last += 1
            try anchors.save(db)
            try db.execute(sql: "DELETE FROM healthEvent WHERE uuid = ?", arguments: [id])
            try db.execute(
                sql: "INSERT INTO deletedEvent (anchor, uuid, typeId, sourceId, device, deletedAt) VALUES (?, ?, ?, ?, ?, ?)",
                arguments: [anchors.last, id, event.type.storageID, sourceID, event.device, Timestamp.now().microsecondsSinceEpoch])
            var changes = ChangeCollector()
            changes.recordDeletedEvent(event)
            return (event, changes)
        }
    }

    /// The events `query` asks for that its reader may see, newest start first.
    public func events(_ query: EventQuery) throws(HealthStoreError) -> [HealthEvent] {
        let types = query.types.isEmpty ? SampleType.eventTypes : query.types.filter { $0.kind == .category }
        guard query.limit > 0, !types.isEmpty else { return [] }
        return try read { db in
            var conditions: [String] = []
            var arguments: StatementArguments = []
            var typeConditions: [String] = []
            for type in types {
                let scope = try ReaderScope(reader: query.reader, type: type, db)
                if let visible = scope.condition(on: "e.sourceId") {
                    typeConditions.append("(e.typeId = ? AND \(visible.sql))")
                    arguments += [type.storageID]
                    arguments += visible.arguments
                } else {
                    typeConditions.append("e.typeId = ?")
                    arguments += [type.storageID]
                }
            }
            conditions.append("(" + typeConditions.joined(separator: " OR ") + ")")
            if let since = query.since {
                conditions.append("e.latest >= ?")
                arguments += [since.microsecondsSinceEpoch]
            }
            if let until = query.until {
                conditions.append("e.start < ?")
                arguments += [until.microsecondsSinceEpoch]
            }
            if let person = query.person {
                conditions.append("e.person = ?")
                arguments += [person]
            }
            if let device = query.device {
                conditions.append("e.device = ?")
                arguments += [device]
            }
            if query.openOnly { conditions.append(#"e."end" IS NULL"#) }
            arguments += [min(query.limit, EventQuery.answerLimit)]
            return try Row.fetchAll(
                db, sql: "\(Self.selectEvents) WHERE \(conditions.joined(separator: " AND ")) ORDER BY e.start DESC, e.id DESC LIMIT ?",
                arguments: arguments
            ).compactMap(Self.event)
        }
    }

    /// The events saved (opened, extended or ended) or deleted after `anchor` up to anchor
    /// `last`, every source's, oldest first, at most `limit` in all; with the anchor of the last
    /// one given (the next call's `anchor`), or `anchor` when none. An event saved again (or
    /// deleted) after `last` is left for that change. `type` narrows them to one event type.
    public func eventChanges(of type: SampleType? = nil, since anchor: Int64, through last: Int64 = .max, limit: Int)
        throws(HealthStoreError) -> EventChangeSet
    {
        try read { db in
            let ofType = type.map { "AND e.typeId = \($0.storageID) " } ?? ""
            let changed = try Row.fetchAll(
                db,
                sql: """
                    SELECT e.anchor, e.uuid, e.typeId, 0, NULL, NULL FROM healthEvent e WHERE e.anchor > ? AND e.anchor <= ? \(ofType)
                    UNION ALL
                    SELECT e.anchor, e.uuid, e.typeId, 1, s.name, e.device FROM deletedEvent e JOIN source s ON s.id = e.sourceId
                    WHERE e.anchor > ? AND e.anchor <= ? \(ofType)
                    ORDER BY 1 LIMIT ?
                    """,
                arguments: [anchor, last, anchor, last, max(0, limit)])
            var changes = EventChangeSet(events: [], anchor: anchor)
            for row in changed {
                let id: String = row[1]
                if row[3] as Bool {
                    if let type = SampleType(storageID: row[2]) {
                        changes.deleted.append(DeletedEvent(id: id, type: type, source: row[4], device: row[5]))
                    }
                } else if let event = try Self.storedEvent(id, db) {
                    changes.events.append(event)
                }
                changes.anchor = row[0]
            }
            return changes
        }
    }

    /// The columns ``event(_:)`` reads, over `healthEvent e` joined with its `source s`.
    private static let selectEvents = """
        SELECT e.uuid, e.typeId, s.name, e.device, e.person, e.start, e."end", e.latest, e.threshold, e.extreme, e.anchor
        FROM healthEvent e JOIN source s ON s.id = e.sourceId
        """

    private static func event(_ row: Row) -> HealthEvent? {
        guard let type = SampleType(storageID: row[1]) else { return nil }
        return HealthEvent(
            id: row[0], type: type, source: row[2], device: row[3], person: row[4], start: Timestamp(microsecondsSinceEpoch: row[5]),
            end: (row[6] as Int64?).map(Timestamp.init(microsecondsSinceEpoch:)), latest: Timestamp(microsecondsSinceEpoch: row[7]),
            threshold: row[8], extreme: row[9])
    }

    private static func storedEvent(_ id: String, _ db: Database) throws -> HealthEvent? {
        try Row.fetchOne(db, sql: "\(selectEvents) WHERE e.uuid = ?", arguments: [id]).flatMap(event)
    }
}

/// What one transaction's event writes look up once: each source's row and whether it may
/// share each event type.
private struct EventWriteLookups {
    private var sources: [String: Int64] = [:]
    private var shares: [Int64: [SampleType: Bool]] = [:]

    mutating func sourceID(_ name: String, _ db: Database) throws -> Int64 {
        if let known = sources[name] { return known }
        let id = try HealthStore.upsertSource(HealthSource(name: name), db)
        sources[name] = id
        return id
    }

    mutating func mayShare(_ sourceID: Int64, _ type: SampleType, _ db: Database) throws -> Bool {
        if let known = shares[sourceID]?[type] { return known }
        let allowed = try HealthStore.status(of: .share, sourceID: sourceID, type: type, db) == .sharingAuthorized
        shares[sourceID, default: [:]][type] = allowed
        return allowed
    }
}
