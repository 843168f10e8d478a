import CentralStore
import CommandSupport
import Foundation
import HealthModel
import HealthRequests
import PostgresClient
import Secrets
import Timestamps

/// The central store in PostgreSQL, read-only: `--store postgresql://…`, `postgres://…` or
/// `service=NAME` (or the same in `HRMD_STORE`). Samples carry the gateway that sent them.
/// Queries run on the calling task (libpq blocks it); a watch waits for the gateways'
/// notifications in slices, so that its deadline and cancellation end it on time.
public final class CentralStoreAccess: StoreAccess {
    public let reader: CentralReader

    /// How long connecting and each statement may take.
    public static let timeout: Duration = .seconds(30)

    public init(reader: CentralReader) { self.reader = reader }

    /// Connects with `conninfo` (a libpq URI or `service=NAME`); a failure is one line, exit 69.
    /// A string libpq cannot read, or one it would take a password from (a command line is
    /// readable by every local user), is refused with exit 64, without repeating it.
    public static func connect(_ conninfo: String, timeZone: TimeZone = .current) throws(CommandFailure) -> CentralStoreAccess {
        let parsed: ConnectionString
        do {
            parsed = try ConnectionString(Secret(conninfo))
        } catch {
            throw CommandFailure("central store: \(error)", status: error == .unreadable ? .usage : .unavailable)
        }
        guard !parsed.holdsPassword else {
            throw CommandFailure(
                "central store: the connection string holds a password, which every local user can read on a command line: use a passfile, a service file or PGPASSWORD",
                status: .usage)
        }
        let connection: PostgresConnection
        do {
            connection = try PostgresConnection(conninfo: conninfo, timeout: timeout)
        } catch {
            throw CommandFailure("central store: \(error)", status: .unavailable)
        }
        do {
            return CentralStoreAccess(reader: try CentralReader(connection: connection, timeZone: timeZone))
        } catch {
            throw failure(error)
        }
    }

    public var showsGateways: Bool { true }

    /// What a write from hrmctl says: the gateways alone write the central store.
    public static let readOnlyLine =
        "the central store is read-only from hrmctl: gateways write it (hrmd's [sync]); manage authorization, tokens and deletions on each gateway's store"

    private static var readOnly: CommandFailure { CommandFailure(readOnlyLine, status: .usage) }

    public func authorizations() async throws(CommandFailure) -> [AuthorizationEntry] { throw Self.readOnly }
    public func pendingRequests() async throws(CommandFailure) -> [AuthorizationRequest] { throw Self.readOnly }
    public func setAuthorization(_ status: AuthorizationStatus, source: String, type: SampleType, access: AuthorizationAccess)
        async throws(CommandFailure)
    { throw Self.readOnly }
    public func issueAccessToken(source: String, manager: Bool, lifetime: Int64?) async throws(CommandFailure) -> IssuedAccessToken {
        throw Self.readOnly
    }
    public func accessTokens() async throws(CommandFailure) -> [AccessTokenRecord] { throw Self.readOnly }
    public func revokeAccessTokens(matching idOrSource: String) async throws(CommandFailure) -> Int { throw Self.readOnly }
    public func deleteSamples(of type: SampleType, source: String, since: Timestamp?, until: Timestamp?) async throws(CommandFailure) -> Int {
        throw Self.readOnly
    }

    public func enumerateSamples(_ query: SampleQuery, _ body: (StoredSample) -> Void) async throws(CommandFailure) {
        try Self.failures { () throws(CentralStoreError) in try reader.enumerateSamples(query, body) }
    }

    public func enumeratePoints(_ query: SampleQuery, _ body: (StoredPoint, SampleContexts) -> Void) async throws(CommandFailure) {
        try Self.failures { () throws(CentralStoreError) in try reader.enumeratePoints(query, body) }
    }

    public func statistics(of type: SampleType, by bucket: StatisticsBucketName, since: Timestamp?, until: Timestamp?)
        async throws(CommandFailure) -> [StatisticsBucketValue]
    {
        let buckets = bucket.bucket(timeZone: reader.timeZone)
        return try Self.failures { () throws(CentralStoreError) in try reader.statistics(of: type, by: buckets, since: since, until: until) }
    }

    public func heartRateVariability(since: Timestamp?, until: Timestamp?) async throws(CommandFailure) -> HeartRateVariability? {
        try Self.failures { () throws(CentralStoreError) in try reader.heartRateVariability(since: since, until: until) }
    }

    public func heartRateZones(since: Timestamp?, until: Timestamp?, maximumHeartRate: Double) async throws(CommandFailure)
        -> [HeartRateZones.Zone]
    {
        try Self.failures { () throws(CentralStoreError) in
            try reader.heartRateZones(since: since, until: until, maximumHeartRate: maximumHeartRate)
        }
    }

    /// The devices; the central store keeps no sensor activity (each gateway's hrmd does).
    public func devices() async throws(CommandFailure) -> (devices: [DeviceSummary], activity: [SensorActivity]) {
        (try Self.failures { () throws(CentralStoreError) in try reader.deviceSummaries() }, [])
    }

    public func sources() async throws(CommandFailure) -> [SourceSummary] {
        try Self.failures { () throws(CentralStoreError) in try reader.sourceSummaries() }
    }

    /// Follows the gateways' commits (`LISTEN hrmd_changes`), reading what changed after the
    /// position at the start; waits at most `pollInterval` seconds at a time (and reads again
    /// every `fallbackEvery` even without a notification), until the deadline.
    public func followChanges(
        of type: SampleType, pollInterval: Double, until deadline: ContinuousClock.Instant?, _ body: (ChangeSet) -> Void
    ) async throws(CommandFailure) {
        try Self.failures { () throws(CentralStoreError) in try reader.listenForChanges() }
        var position = try Self.failures { () throws(CentralStoreError) in try reader.currentPosition(of: type) }
        let slice = Duration.seconds(min(max(pollInterval, 0.05), 1))
        let fallbackEvery = Duration.seconds(10)
        var lastRead = ContinuousClock.now
        var notified = false
        while !Task.isCancelled {
            if notified || ContinuousClock.now - lastRead >= fallbackEvery {
                let changes = try Self.failures { () throws(CentralStoreError) in try reader.changes(after: &position) }
                lastRead = .now
                if !changes.added.isEmpty || !changes.deleted.isEmpty { body(changes) }
            }
            var wait = slice
            if let deadline {
                let left = deadline - .now
                if left <= .zero { return }
                wait = min(wait, left)
            }
            notified = try Self.failures { () throws(CentralStoreError) in try reader.awaitChanges(upTo: wait) }
            await Task.yield()
        }
    }

    /// Runs a reader call, turning its error into a one-line failure: a connection that
    /// fails or breaks is exit 69, as for a store service that is not running.
    static func failures<T>(_ body: () throws(CentralStoreError) -> T) throws(CommandFailure) -> T {
        do {
            return try body()
        } catch {
            throw failure(error)
        }
    }

    static func failure(_ error: CentralStoreError) -> CommandFailure {
        switch error {
        case .postgres(.connectionFailed), .postgres(.connectionLost), .postgres(.timedOut), .noCentralSchema:
            CommandFailure("\(error)", status: .unavailable)
        case .postgres(.server(let state, _, _, _)) where state == "42501":
            CommandFailure("\(error)", status: .permissionDenied)
        case .unknownTimeZone:
            CommandFailure("\(error)", status: .usage)
        default:
            CommandFailure("\(error)", status: .failure)
        }
    }
}
