import HealthRequests
import CommandSupport
import HealthClient
import HealthModel
import HealthStore
import HealthWire
import Timestamps

/// A store file opened directly: `--store PATH` or `HRMD_STORE`. Its queries are local SQLite
/// work, done on the calling task; between polls for changes it sleeps as a task does.
public struct FileStoreAccess: StoreAccess {
    public let store: HealthStore

    public init(store: HealthStore) { self.store = store }

    public func authorizations() async throws(CommandFailure) -> [AuthorizationEntry] {
        try Self.failures { () throws(HealthStoreError) in try store.authorizations() }
    }

    public func pendingRequests() async throws(CommandFailure) -> [AuthorizationRequest] {
        AuthorizationRequest.pending(in: try Self.failures { () throws(HealthStoreError) in try store.authorizationAccessEntries() })
    }

    public func setAuthorization(_ status: AuthorizationStatus, source: String, type: SampleType, access: AuthorizationAccess)
        async throws(CommandFailure)
    {
        try Self.failures { () throws(HealthStoreError) in
            switch access {
            case .share: try store.setShareAuthorization(status, source: source, type: type)
            case .read: try store.setReadAuthorization(status, source: source, type: type)
            }
        }
    }

    public func issueAccessToken(source: String, manager: Bool, lifetime: Int64?) async throws(CommandFailure) -> IssuedAccessToken {
        try Self.failures { () throws(HealthStoreError) in try store.issueAccessToken(source: source, manager: manager, lifetime: lifetime) }
    }

    public func accessTokens() async throws(CommandFailure) -> [AccessTokenRecord] {
        try Self.failures { () throws(HealthStoreError) in try store.accessTokens() }
    }

    public func revokeAccessTokens(matching idOrSource: String) async throws(CommandFailure) -> Int {
        try Self.failures { () throws(HealthStoreError) in try store.revokeAccessTokens(matching: idOrSource) }
    }

    public func enumerateSamples(_ query: SampleQuery, _ body: (StoredSample) -> Void) async throws(CommandFailure) {
        try Self.failures { () throws(HealthStoreError) in try store.enumerateSamples(query) { body($0) } }
    }

    public func enumeratePoints(_ query: SampleQuery, _ body: (StoredPoint, SampleContexts) -> Void) async throws(CommandFailure) {
        try Self.failures { () throws(HealthStoreError) in try store.enumeratePoints(query) { body($0, $1) } }
    }

    public func statistics(of type: SampleType, by bucket: StatisticsBucketName, since: Timestamp?, until: Timestamp?)
        async throws(CommandFailure) -> [StatisticsBucketValue]
    {
        let buckets = bucket.bucket(timeZone: .current)
        return try Self.failures { () throws(HealthStoreError) in try store.statistics(of: type, by: buckets, since: since, until: until) }
    }

    public func heartRateVariability(since: Timestamp?, until: Timestamp?) async throws(CommandFailure) -> HeartRateVariability? {
        try Self.failures { () throws(HealthStoreError) in
            try store.heartRateVariability(SampleQuery(type: .rrInterval, since: since, until: until))
        }
    }

    public func heartRateZones(since: Timestamp?, until: Timestamp?, maximumHeartRate: Double) async throws(CommandFailure) -> [HeartRateZones.Zone] {
        try Self.failures { () throws(HealthStoreError) in
            try store.heartRateZones(SampleQuery(type: .heartRate, since: since, until: until), maximumHeartRate: maximumHeartRate)?.zones ?? []
        }
    }

    public func devices() async throws(CommandFailure) -> (devices: [DeviceSummary], activity: [SensorActivity]) {
        try Self.failures { () throws(HealthStoreError) in (try store.deviceSummaries(), try store.sensorActivity()) }
    }

    public func sources() async throws(CommandFailure) -> [SourceSummary] {
        try Self.failures { () throws(HealthStoreError) in try store.sourceSummaries() }
    }

    public func deleteSamples(of type: SampleType, source: String, since: Timestamp?, until: Timestamp?) async throws(CommandFailure) -> Int {
        try Self.failures { () throws(HealthStoreError) in try store.deleteSamples(of: type, source: source, since: since, until: until) }
    }

    /// Polls for changes after the newest one (the file is shared with hrmd, which writes from
    /// another process).
    public func followChanges(
        of type: SampleType, pollInterval: Double, until deadline: ContinuousClock.Instant?, _ body: (ChangeSet) -> Void
    ) async throws(CommandFailure) {
        var anchor = try Self.failures { () throws(HealthStoreError) in try store.currentAnchor() }
        let limit = 10_000
        while !Task.isCancelled, deadline.map({ ContinuousClock.now < $0 }) ?? true {
            let changes = try Self.failures { () throws(HealthStoreError) in try store.changes(of: type, since: anchor, limit: limit) }
            anchor = changes.anchor
            if !changes.added.isEmpty || !changes.deleted.isEmpty { body(changes) }
            if changes.added.count < limit {
                do { try await Task.sleep(for: .seconds(pollInterval)) } catch { return }
            }
        }
    }

    /// Runs a store call, turning its error into a one-line failure.
    static func failures<T>(_ body: () throws(HealthStoreError) -> T) throws(CommandFailure) -> T {
        do {
            return try body()
        } catch {
            switch error {
            case .unknownType, .incompatibleUnit: throw CommandFailure("\(error)", status: .usage)
            case .missing: throw CommandFailure("\(error)", status: .noInput)
            case .permissionDenied: throw CommandFailure("\(error)", status: .permissionDenied)
            case .damaged, .damagedSeries, .foreignWriteAheadLog: throw CommandFailure("\(error)", status: .dataError)
            default: throw CommandFailure("\(error)", status: .failure)
            }
        }
    }
}
