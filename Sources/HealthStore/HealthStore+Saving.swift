import HealthModel
import Foundation
import GRDB


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
            return (writer.report, writer.changes)
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

