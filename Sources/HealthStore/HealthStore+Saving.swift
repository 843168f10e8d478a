import Foundation
import GRDB

/// What one `save` did with each sample.
public struct SaveReport: Sendable, Equatable {
    /// Samples added to the store.
    public var stored = 0
    /// Samples whose identity (or sync identifier at the same or a higher version) was
    /// already stored: nothing changed.
    public var unchanged = 0
    /// Stored samples replaced by a higher sync version.
    public var replaced = 0
    /// Samples not saved because the source lacks share authorization, by type.
    public var denied: [SampleType: Int] = [:]
    /// The share status each type of the batch had inside the write transaction.
    public var authorization: [SampleType: AuthorizationStatus] = [:]

    public init() {}

    /// All samples not saved for lack of authorization.
    public var deniedCount: Int { denied.values.reduce(0, +) }
}

/// What `save` does with samples of a type the source may not share.
public enum SavePolicy: Sendable, Hashable {
    /// Saves the rest and counts them in `SaveReport.denied`; a type never asked for is
    /// recorded as a `notDetermined` request (the recording daemon's way).
    case skipUnauthorized
    /// Saves nothing and throws `HealthStoreError.shareNotAuthorized`; records no request
    /// (a program's batch is all or nothing, as HealthKit's save).
    case refuseUnauthorized
}

extension HealthStore {
    /// Saves `samples` written by `source` in one transaction.
    ///
    /// Authorization is checked inside the transaction, per type, so a revoke applies from the
    /// next save; `policy` says what happens to samples of a type the source may not share.
    /// Saving a sample whose identity (source, device, type, start) is stored changes nothing;
    /// with a sync identifier, a higher sync version replaces the stored sample and leaves a
    /// tombstone.
    public func save(_ samples: [QuantitySample], from source: HealthSource, policy: SavePolicy = .skipUnauthorized)
        throws(HealthStoreError) -> SaveReport
    {
        guard !samples.isEmpty else { return SaveReport() }
        return try writeAnnouncing { db in
            if policy == .refuseUnauthorized { try Self.refuseUnauthorized(samples, source: source.name, db) }
            var writer = try SampleWriter(db: db, source: source, cache: try writeCache.take(db))
            try writer.save(samples)
            writeCache.keep(writer.cache, after: db)
            return (writer.report, try pendingChange(writer.changes, db))
        }
    }

    /// Throws `shareNotAuthorized` when `source` may not share one of the types of `samples`.
    private static func refuseUnauthorized(_ samples: [QuantitySample], source: String, _ db: Database) throws {
        var types = Set<SampleType>()
        for sample in samples { types.insert(sample.type) }
        var refused: [SampleType] = []
        for type in types where try status(of: .share, source: source, type: type, db) != .sharingAuthorized {
            refused.append(type)
        }
        guard refused.isEmpty else {
            throw HealthStoreError.shareNotAuthorized(
                source: source, types: refused.sorted { $0.storageID < $1.storageID }.map(\.identifier))
        }
    }
}

