@preconcurrency import Glibc
import HealthRequests
import CommandSupport
import Foundation
import HealthClient
import HealthModel
import HealthStore
import HealthWire
import Timestamps

/// The store service `org.hrmd.Health` on the system bus, as hrmctl uses it when neither
/// `--store` nor `HRMD_STORE` names a file. Every call awaits the asynchronous client on the
/// calling task; samples and changes reach the caller's closure on that task too.
public struct ServiceStoreAccess: StoreAccess {
    public let client: HealthServiceClient

    public init(client: HealthServiceClient) { self.client = client }

    /// hrmctl on the system bus, as application `app`; no bus is the one-line "not running" failure.
    public static func system(app: String = "hrmctl") throws(CommandFailure) -> ServiceStoreAccess {
        do {
            return ServiceStoreAccess(client: try HealthServiceClient.system(app: app))
        } catch {
            throw error.commandFailure
        }
    }

    public func authorizations() async throws(CommandFailure) -> [AuthorizationEntry] {
        AuthorizationOrder.rows(from: try await answer { () async throws(HealthServiceError) in try await client.authorizations() })
    }

    public func pendingRequests() async throws(CommandFailure) -> [AuthorizationRequest] {
        AuthorizationRequest.pending(in: try await answer { () async throws(HealthServiceError) in try await client.authorizations() })
    }

    public func setAuthorization(_ status: AuthorizationStatus, source: String, type: SampleType, access: AuthorizationAccess)
        async throws(CommandFailure)
    {
        try await answer { () async throws(HealthServiceError) in
            try await client.setAuthorization(status, source: source, type: type, access: access)
        }
    }

    public func issueAccessToken(source: String, manager: Bool, lifetime: Int64?) async throws(CommandFailure) -> IssuedAccessToken {
        let made = try await answer { () async throws(HealthServiceError) in
            try await client.send(CreateAccessToken(source: source, manager: manager, expiresIn: lifetime))
        }
        let record = AccessTokenRecord(
            id: made.id, source: source, manager: manager, created: .now(),
            expires: made.expires == 0 ? nil : Timestamp(microsecondsSinceEpoch: made.expires), revoked: nil)
        return IssuedAccessToken(record: record, token: made.token)
    }

    public func accessTokens() async throws(CommandFailure) -> [AccessTokenRecord] {
        try await answer { () async throws(HealthServiceError) in try await client.send(AccessTokens()).tokens }
    }

    public func revokeAccessTokens(matching idOrSource: String) async throws(CommandFailure) -> Int {
        Int(try await answer { () async throws(HealthServiceError) in try await client.send(RevokeAccessTokens(idOrSource: idOrSource)).revoked })
    }

    public func enumerateSamples(_ query: SampleQuery, _ body: (StoredSample) -> Void) async throws(CommandFailure) {
        let filter = HealthServiceClient.SampleFilter(
            source: query.source, device: query.device, limit: query.limit, newestFirst: query.newestFirst)
        try await answer { () async throws(HealthServiceError) in
            _ = try await client.querySamplesToFile(of: query.type, since: query.since, until: query.until, filter: filter, body)
        }
    }

    public func statistics(of type: SampleType, by bucket: StatisticsBucketName, since: Timestamp?, until: Timestamp?)
        async throws(CommandFailure) -> [StatisticsBucketValue]
    {
        let zone = TimeZone.current.identifier
        return try await answer { () async throws(HealthServiceError) in
            try await client.statistics(of: type, by: bucket, since: since, until: until, timeZone: zone)
        }
    }

    public func heartRateVariability(since: Timestamp?, until: Timestamp?) async throws(CommandFailure) -> HeartRateVariability? {
        try await answer { () async throws(HealthServiceError) in try await client.heartRateVariability(since: since, until: until) }
    }

    public func heartRateZones(since: Timestamp?, until: Timestamp?, maximumHeartRate: Double) async throws(CommandFailure)
        -> [HeartRateZones.Zone]
    {
        try await answer { () async throws(HealthServiceError) in
            try await client.heartRateZones(since: since, until: until, maximumHeartRate: maximumHeartRate)
        }
    }

    public func devices() async throws(CommandFailure) -> (devices: [DeviceSummary], activity: [SensorActivity]) {
        try await answer { () async throws(HealthServiceError) in try await client.devices() }
    }

    public func sources() async throws(CommandFailure) -> [SourceSummary] {
        try await answer { () async throws(HealthServiceError) in try await client.sources() }
    }

    public func deleteSamples(of type: SampleType, source: String, since: Timestamp?, until: Timestamp?) async throws(CommandFailure) -> Int {
        try await answer { () async throws(HealthServiceError) in
            try await client.deleteSamples(of: type, source: source, since: since, until: until)
        }
    }

    /// Follows `SamplesChanged`: no polling.
    public func followChanges(
        of type: SampleType, pollInterval: Double, until deadline: ContinuousClock.Instant?, _ body: (ChangeSet) -> Void
    ) async throws(CommandFailure) {
        let changes = try await answer { () async throws(HealthServiceError) in try await client.watch(type) }
        do {
            try await StreamUntilDeadline(elements: changes, deadline: deadline).forEach(body)
        } catch let error as HealthServiceError {
            throw error.commandFailure
        } catch {
            throw CommandFailure("\(error)", status: .failure)
        }
    }

    /// Replays the recording at `path` through the service (Import), as source hrmd.
    public func importRecording(path: String, acceptDamaged: Bool, speed: Double?, measurementHandle: UInt16? = nil)
        async throws(CommandFailure) -> ImportResult
    {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            let reason = String(cString: strerror(errno))
            throw CommandFailure("cannot open the recording \(path): \(reason)", status: errno == ENOENT ? .noInput : errno == EACCES ? .permissionDenied : .failure)
        }
        defer { close(descriptor) }
        return try await answer { () async throws(HealthServiceError) in
            try await client.importRecording(
                descriptor: descriptor, name: path, acceptDamaged: acceptDamaged, speed: speed, measurementHandle: measurementHandle)
        }
    }

    /// Awaits `call`, turning the service's error into the one-line failure.
    private func answer<T>(_ call: () async throws(HealthServiceError) -> T) async throws(CommandFailure) -> T {
        do {
            return try await call()
        } catch {
            throw error.commandFailure
        }
    }
}

extension HealthServiceError {
    /// The one line and exit status hrmctl reports.
    public var commandFailure: CommandFailure {
        switch self {
        case .notRunning: CommandFailure(Self.notRunningLine, status: .unavailable)
        case .accessDenied(let message):
            CommandFailure(
                "access denied: this needs a manager of the store (root, a member of group hrmd, or whom polkit allows \(HealthBus.manageAction)): \(message)",
                status: .permissionDenied)
        case .invalidArguments(let message): CommandFailure(message, status: .usage)
        case .notAuthorized(let message): CommandFailure(message, status: .permissionDenied)
        case .badData(let message): CommandFailure(message, status: .dataError)
        case .failed(let message), .limitsExceeded(let message), .timedOut(let message), .other(let message):
            CommandFailure(message, status: .failure)
        }
    }

    /// What hrmctl says when nobody answers for the store service.
    public static let notRunningLine =
        "the hrmd store service is not running on the system bus; start it with: systemctl start \(HealthBus.unit) (or name a store file with --store PATH)"
}
