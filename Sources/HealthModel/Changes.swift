import Foundation
import Timestamps

/// A sample that was deleted, as an anchored query reports it (HKDeletedObject).
public struct DeletedSample: Codable, Sendable, Hashable {
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
