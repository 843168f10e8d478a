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
/// `--store` nor `HRMD_STORE` names a file: each request is a method call, served by the
/// service as for any application of this user. Every call awaits the asynchronous client on
/// the calling task; samples and changes reach the caller's closure on that task too.
public struct ServiceTransport: RequestTransport {
    public let client: HealthServiceClient

    public init(client: HealthServiceClient) { self.client = client }

    /// hrmctl on the system bus, as application `app`; no bus is the one-line "not running" failure.
    public static func system(app: String = "hrmctl") throws(CommandFailure) -> ServiceTransport {
        do {
            return ServiceTransport(client: try HealthServiceClient.system(app: app))
        } catch {
            throw error.commandFailure
        }
    }

    public func send<Request: HealthRequest>(_ request: Request) async throws(CommandFailure) -> Request.Response {
        try await answer { () async throws(HealthServiceError) in try await client.send(request) }
    }

    public func enumerateSamples(_ query: SampleQuery, _ body: (StoredSample) -> Void) async throws(CommandFailure) {
        let filter = HealthServiceClient.SampleFilter(
            source: query.source, device: query.device, limit: query.limit, newestFirst: query.newestFirst)
        try await answer { () async throws(HealthServiceError) in
            _ = try await client.querySamplesToFile(of: query.type, since: query.since, until: query.until, filter: filter, body)
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

    /// Follows `SamplesChanged` for the event type: no polling.
    public func followEvents(
        of types: [SampleType], pollInterval: Double, until deadline: ContinuousClock.Instant?, ready: () -> Void,
        _ body: ([HealthEvent]) -> Void
    ) async throws(CommandFailure) {
        let events = try await answer { () async throws(HealthServiceError) in try await client.watchEvents(of: types) }
        ready()
        do {
            try await StreamUntilDeadline(elements: events, deadline: deadline).forEach(body)
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
