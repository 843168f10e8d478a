import HealthModel

/// A request of a source that the user has not answered: the permission sheet's line.
public struct AuthorizationRequest: Sendable, Hashable {
    public var source: String
    public var type: SampleType
    public var access: AuthorizationAccess

    public init(source: String, type: SampleType, access: AuthorizationAccess) {
        self.source = source
        self.type = type
        self.access = access
    }

    /// The pending requests among a store's (source, type, access, status) entries, ordered by
    /// source, type, then share before read.
    public static func pending(in records: [AuthorizationAccessEntry]) -> [AuthorizationRequest] {
        records.filter { $0.status == .notDetermined }
            .map { AuthorizationRequest(source: $0.source, type: $0.type, access: $0.access) }
            .sorted { a, b in
                if a.source != b.source { return AuthorizationOrder.before(a.source, b.source) }
                if a.type != b.type { return a.type.storageID < b.type.storageID }
                return a.access == .share && b.access == .read
            }
    }
}

/// The order of a file store's authorization rows: source names as SQLite compares them
/// (bytes), then the type's storage order.
public enum AuthorizationOrder {
    public static func before(_ a: String, _ b: String) -> Bool { a.utf8.lexicographicallyPrecedes(b.utf8) }

    /// The service's (source, type, access, status) entries as rows of (source, type, share,
    /// read), as a file store lists them; an answer not given is `notDetermined`.
    public static func rows(from records: [AuthorizationAccessEntry]) -> [AuthorizationEntry] {
        struct Key: Hashable {
            var source: String
            var type: SampleType
        }
        var rows: [Key: AuthorizationEntry] = [:]
        for record in records {
            let key = Key(source: record.source, type: record.type)
            var row = rows[key] ?? AuthorizationEntry(source: record.source, type: record.type, share: .notDetermined, read: .notDetermined)
            switch record.access {
            case .share: row.share = record.status
            case .read: row.read = record.status
            }
            rows[key] = row
        }
        return rows.values.sorted { a, b in
            a.source != b.source ? before(a.source, b.source) : a.type.storageID < b.type.storageID
        }
    }
}
