import HealthRequests
import CommandSupport
import HealthClient
import HealthModel
import HealthStore
import HealthWire
import Timestamps

/// What hrmctl's store subcommands need of a store, whether it is a file opened directly
/// (`--store PATH`, `HRMD_STORE`) or the store service on the system bus. Each subcommand has
/// one code path over this, so its output is the same either way. Every failure is a
/// one-line `CommandFailure` with the documented exit status. Every call is asynchronous:
/// the service's answers are awaited, never waited for on a thread; the closures that take
/// samples and changes run on the calling task, in order.
public protocol StoreAccess {
    /// Every source's answers, one row per (source, type), ordered by source then type.
    func authorizations() async throws(CommandFailure) -> [AuthorizationEntry]
    /// The requests nobody has answered yet, in the same order.
    func pendingRequests() async throws(CommandFailure) -> [AuthorizationRequest]
    /// Records the user's answer for `source` and `type`.
    func setAuthorization(_ status: AuthorizationStatus, source: String, type: SampleType, access: AuthorizationAccess)
        async throws(CommandFailure)
    /// Calls `body` with each sample of `query`, in order, without holding them all.
    func enumerateSamples(_ query: SampleQuery, _ body: (StoredSample) -> Void) async throws(CommandFailure)
    /// The same samples as points with their contexts (`HealthStore.enumeratePoints`), for
    /// readers that print many.
    func enumeratePoints(_ query: SampleQuery, _ body: (StoredPoint, SampleContexts) -> Void) async throws(CommandFailure)
    /// Statistics per bucket (1d buckets are days of the local time zone), canonical unit.
    func statistics(of type: SampleType, by bucket: StatisticsBucketName, since: Timestamp?, until: Timestamp?)
        async throws(CommandFailure) -> [StatisticsBucketValue]
    /// Heart-rate variability of the RR intervals in the range; nil without beats.
    func heartRateVariability(since: Timestamp?, until: Timestamp?) async throws(CommandFailure) -> HeartRateVariability?
    /// Time in heart-rate zones over the range; empty without samples.
    func heartRateZones(since: Timestamp?, until: Timestamp?, maximumHeartRate: Double) async throws(CommandFailure)
        -> [HeartRateZones.Zone]
    /// Every device, and what the daemon says of each sensor now.
    func devices() async throws(CommandFailure) -> (devices: [DeviceSummary], activity: [SensorActivity])
    /// Every source that wrote samples.
    func sources() async throws(CommandFailure) -> [SourceSummary]
    /// Deletes `source`'s samples of `type` in the range, leaving tombstones; returns how many.
    func deleteSamples(of type: SampleType, source: String, since: Timestamp?, until: Timestamp?) async throws(CommandFailure) -> Int
    /// Calls `body` with each change of `type` after now, until `deadline` (nil: until the
    /// process ends) or until the calling task is cancelled, which ends it as the deadline
    /// does. A file is polled every `pollInterval` seconds; the service signals.
    /// Makes a bearer token for the HTTP front acting as `source`, expiring in `lifetime`
    /// seconds (nil: never).
    func issueAccessToken(source: String, manager: Bool, lifetime: Int64?) async throws(CommandFailure) -> IssuedAccessToken
    /// Every access token, oldest first.
    func accessTokens() async throws(CommandFailure) -> [AccessTokenRecord]
    /// Revokes the token with this id or every token of this source; how many.
    func revokeAccessTokens(matching idOrSource: String) async throws(CommandFailure) -> Int
    func followChanges(
        of type: SampleType, pollInterval: Double, until deadline: ContinuousClock.Instant?, _ body: (ChangeSet) -> Void
    ) async throws(CommandFailure)
    /// Whether samples come from gateways (the central store): outputs then add a gateway
    /// column; a local store's outputs stay as they were.
    var showsGateways: Bool { get }
}

extension StoreAccess {
    public var showsGateways: Bool { false }

    /// Points made from `enumerateSamples`, each context numbered once.
    public func enumeratePoints(_ query: SampleQuery, _ body: (StoredPoint, SampleContexts) -> Void) async throws(CommandFailure) {
        var contexts = SampleContexts()
        try await enumerateSamples(query) { stored in
            let point = contexts.point(of: stored)
            body(point, contexts)
        }
    }

    /// The samples of `query`, in memory (for what needs them all, such as a plot).
    public func samples(_ query: SampleQuery) async throws(CommandFailure) -> [StoredSample] {
        var result: [StoredSample] = []
        try await enumerateSamples(query) { result.append($0) }
        return result
    }

    /// How many samples `query` matches.
    public func count(_ query: SampleQuery) async throws(CommandFailure) -> Int {
        var count = 0
        try await enumerateSamples(query) { _ in count += 1 }
        return count
    }
}

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
