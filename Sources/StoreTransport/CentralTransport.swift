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
/// Requests are served in this process as the owner (``OwnerContext``) over the central
/// reader (``CentralRequestStore``), which refuses every write with one line. Queries run on
/// the calling task (libpq blocks it); a watch waits for the gateways' notifications in
/// slices, so that its deadline and cancellation end it on time.
public struct CentralTransport: RequestTransport, @unchecked Sendable {
    /// Used by one task at a time (hrmctl's), as the reader requires.
    public let reader: CentralReader

    /// How long connecting and each statement may take.
    public static let timeout: Duration = .seconds(30)

    public init(reader: CentralReader) { self.reader = reader }

    /// Connects with `conninfo` (a libpq URI or `service=NAME`); a failure is one line, exit 69.
    /// A string libpq cannot read, or one it would take a password from (a command line is
    /// readable by every local user), is refused with exit 64, without repeating it.
    public static func connect(_ conninfo: String, timeZone: TimeZone = .current) throws(CommandFailure) -> CentralTransport {
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
            return CentralTransport(reader: try CentralReader(connection: connection, timeZone: timeZone))
        } catch {
            throw failure(error)
        }
    }

    public var showsGateways: Bool { true }

    public func send<Request: HealthRequest>(_ request: Request) async throws(CommandFailure) -> Request.Response {
        do {
            return try await OwnerContext(store: CentralRequestStore(reader: reader)).serve(request)
        } catch {
            throw error.commandFailure
        }
    }

    public func enumerateSamples(_ query: SampleQuery, _ body: (StoredSample) -> Void) async throws(CommandFailure) {
        try Self.failures { () throws(CentralStoreError) in try reader.enumerateSamples(query, body) }
    }

    public func enumeratePoints(_ query: SampleQuery, _ body: (StoredPoint, SampleContexts) -> Void) async throws(CommandFailure) {
        try Self.failures { () throws(CentralStoreError) in try reader.enumeratePoints(query, body) }
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
        HealthStoreError.engine(CentralRequestStore.engineFailure(error)).commandFailure
    }
}
