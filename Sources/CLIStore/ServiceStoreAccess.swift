@preconcurrency import Glibc
import CLISupport
import Foundation
import HealthClient
import HealthStore
import HealthWire
import Timestamps

/// The store service `org.hrmd.Health` on the system bus, as hrmctl uses it when neither
/// `--store` nor `HRMD_STORE` names a file. The synchronous calls of `StoreAccess` wait for
/// the asynchronous client on a task of their own.
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

    public func authorizations() throws(CommandFailure) -> [AuthorizationEntry] {
        AuthorizationOrder.rows(from: try wait { client in try await client.authorizations() })
    }

    public func pendingRequests() throws(CommandFailure) -> [AuthorizationRequest] {
        AuthorizationRequest.pending(in: try wait { client in try await client.authorizations() })
    }

    public func setAuthorization(_ status: AuthorizationStatus, source: String, type: SampleType, access: AuthorizationAccess)
        throws(CommandFailure)
    {
        try wait { client in try await client.setAuthorization(status, source: source, type: type, access: access) }
    }

    public func enumerateSamples(_ query: SampleQuery, _ body: (StoredSample) -> Void) throws(CommandFailure) {
        let filter = HealthServiceClient.SampleFilter(
            source: query.source, device: query.device, limit: query.limit, newestFirst: query.newestFirst)
        try stream({ client, channel in
            _ = try await client.querySamplesToFile(of: query.type, since: query.since, until: query.until, filter: filter) {
                channel.send($0)
            }
        }, body)
    }

    public func statistics(of type: SampleType, by bucket: StatisticsBucketName, since: Timestamp?, until: Timestamp?)
        throws(CommandFailure) -> [StatisticsBucketValue]
    {
        let zone = TimeZone.current.identifier
        return try wait { client in try await client.statistics(of: type, by: bucket, since: since, until: until, timeZone: zone) }
    }

    public func heartRateVariability(since: Timestamp?, until: Timestamp?) throws(CommandFailure) -> HeartRateVariability? {
        try wait { client in try await client.heartRateVariability(since: since, until: until) }
    }

    public func heartRateZones(since: Timestamp?, until: Timestamp?, maximumHeartRate: Double) throws(CommandFailure) -> [HeartRateZones.Zone] {
        try wait { client in try await client.heartRateZones(since: since, until: until, maximumHeartRate: maximumHeartRate) }
    }

    public func devices() throws(CommandFailure) -> (devices: [DeviceSummary], activity: [SensorActivity]) {
        try wait { client in try await client.devices() }
    }

    public func sources() throws(CommandFailure) -> [SourceSummary] {
        try wait { client in try await client.sources() }
    }

    public func deleteSamples(of type: SampleType, source: String, since: Timestamp?, until: Timestamp?) throws(CommandFailure) -> Int {
        try wait { client in try await client.deleteSamples(of: type, source: source, since: since, until: until) }
    }

    /// Follows `SamplesChanged`: no polling.
    public func followChanges(
        of type: SampleType, pollInterval: Double, until deadline: ContinuousClock.Instant?, _ body: (ChangeSet) -> Void
    ) throws(CommandFailure) {
        try stream({ client, channel in
            let changes = try await client.watch(type)
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    for try await change in changes { channel.send(change) }
                }
                if let deadline {
                    group.addTask { try? await Task.sleep(until: deadline, clock: .continuous) }
                }
                try await group.next()
                group.cancelAll()
            }
        }, body)
    }

    /// Replays the recording at `path` through the service (Import), as source hrmd.
    public func importRecording(path: String, acceptDamaged: Bool, speed: Double?, measurementHandle: UInt16? = nil) throws(CommandFailure)
        -> HealthServiceClient.ImportResult
    {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            let reason = String(cString: strerror(errno))
            throw CommandFailure("cannot open the recording \(path): \(reason)", status: errno == ENOENT ? .noInput : errno == EACCES ? .permissionDenied : .failure)
        }
        defer { close(descriptor) }
        return try wait { client in
            try await client.importRecording(
                descriptor: descriptor, name: path, acceptDamaged: acceptDamaged, speed: speed, measurementHandle: measurementHandle)
        }
    }

    /// Runs `produce` on a task of its own and calls `body` on this thread with each value it
    /// sends, in order, until it ends; its failure becomes this call's.
    private func stream<Element: Sendable>(
        _ produce: @escaping @Sendable (HealthServiceClient, BlockingChannel<Element>) async throws -> Void,
        _ body: (Element) -> Void
    ) throws(CommandFailure) {
        let channel = BlockingChannel<Element>()
        let client = client
        Task.detached {
            do {
                try await produce(client, channel)
                channel.finish()
            } catch let error as HealthServiceError {
                channel.finish(failing: error.commandFailure)
            } catch let failure as CommandFailure {
                channel.finish(failing: failure)
            } catch {
                channel.finish(failing: CommandFailure("\(error)", status: .failure))
            }
        }
        try channel.drain(body)
    }

    /// Runs `operation` on a task of its own and waits for its result on this thread.
    private func wait<T: Sendable>(_ operation: @escaping @Sendable (HealthServiceClient) async throws -> T) throws(CommandFailure) -> T {
        var result: T?
        try stream({ client, channel in channel.send(try await operation(client)) }) { result = $0 }
        guard let result else { throw CommandFailure("the store service call ended without an answer", status: .failure) }
        return result
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
