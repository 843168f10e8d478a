import HealthModel

/// One step of a gateway's sync for one sample type: what the local store's anchored changes
/// query reported after the central cursor `from`, up to and including `to`. Applied in one
/// PostgreSQL transaction together with moving the cursor from `from` to `to`, so that it
/// counts exactly once whatever fails where.
public struct SyncBatch: Sendable {
    public var type: SampleType
    /// The central cursor this batch starts from: it is applied only if the cursor is there.
    public var from: Int64
    /// The local anchor the cursor moves to: every change up to it is in this batch.
    public var to: Int64
    /// Samples added, in anchor order; each `id` is its local anchor.
    public var added: [StoredSample]
    /// Samples deleted (tombstones); each `id` is the local anchor the sample had.
    public var deleted: [DeletedSample]

    public init(type: SampleType, from: Int64, to: Int64, added: [StoredSample], deleted: [DeletedSample]) {
        self.type = type
        self.from = from
        self.to = to
        self.added = added
        self.deleted = deleted
    }
}

/// What applying a batch did.
public struct SyncOutcome: Sendable, Equatable {
    /// Samples the central store now holds from this batch.
    public var stored = 0
    /// Samples another gateway had already stored (the same beat heard twice, the same
    /// recording replayed twice): left out, by `SampleIdentity`.
    public var duplicates = 0
    /// Samples removed by the batch's tombstones.
    public var deleted = 0

    public init(stored: Int = 0, duplicates: Int = 0, deleted: Int = 0) {
        self.stored = stored
        self.duplicates = duplicates
        self.deleted = deleted
    }
}
