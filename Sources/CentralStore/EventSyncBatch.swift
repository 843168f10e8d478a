import HealthModel
import PostgresClient

/// One step of a gateway's sync of the events of one type: the local store's saves and
/// deletions of them after the central cursor of the type, `from`, up to and including `to`,
/// each saved event whole as it now is (opened, extended or ended), each deleted one by its
/// id. Applied in one transaction with the cursor's move, so each change counts exactly once
/// whatever fails where.
public struct EventSyncBatch: Sendable {
    public var type: SampleType
    public var from: Int64
    public var to: Int64
    public var events: [HealthEvent]
    public var deleted: [String]

    public init(type: SampleType, from: Int64, to: Int64, events: [HealthEvent], deleted: [String] = []) {
        self.type = type
        self.from = from
        self.to = to
        self.events = events
        self.deleted = deleted
    }
}

extension CentralGateway {
    /// Applies `batch` and moves the cursor of its type from `batch.from` to `batch.to`, in
    /// one transaction: all of it or none. Throws `cursorMoved` (nothing applied) when the
    /// cursor is elsewhere. Returns how many events it wrote (new, or replacing this gateway's
    /// copy) and removed.
    public func apply(_ batch: EventSyncBatch) throws(CentralStoreError) -> (stored: Int, deleted: Int) {
        try inCursorTransaction(of: batch.type, from: batch.from, to: batch.to) { connection, sourceID throws(PostgresError) in
            for event in batch.events {
                _ = try connection.execute(
                    "SELECT hrmd.event_put($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)",
                    [
                        String(id), CentralText.storable(event.id), event.type.identifier,
                        String(try sourceID(HealthSource(name: event.source))), event.device.map(CentralText.storable),
                        event.person.map(CentralText.storable), String(event.start.microsecondsSinceEpoch),
                        String(event.latest.microsecondsSinceEpoch), event.end.map { String($0.microsecondsSinceEpoch) },
                        event.threshold.map { String($0) }, event.extreme.map { String($0) }, String(batch.to),
                    ])
            }
            var deleted = 0
            if !batch.deleted.isEmpty {
                let gone = try connection.execute(
                    "SELECT hrmd.event_drop($1, $2)", [String(id), PostgresArrayLiteral.text(batch.deleted.map(CentralText.storable))])
                deleted = Int(try gone.int64(0, 0))
            }
            return (batch.events.count, deleted)
        }
    }
}
