@preconcurrency import Glibc
import HealthRequests
import HealthModel
import HealthStore
import HealthWire
import Logging
import SDBus
import ServiceLifecycle

/// Why the store service cannot serve at all (as opposed to waiting for the bus).
public enum HealthServiceError: Error, Sendable, CustomStringConvertible {
    /// Another connection owns `org.hrmd.Health` (another hrmd), or the bus policy does not
    /// let this user own it.
    case nameUnavailable(String)

    public var description: String {
        switch self {
        case .nameUnavailable(let reason):
            "cannot serve \(HealthBus.name) on the system bus: \(reason) (is another hrmd running? is the bus policy org.hrmd.Health.conf installed?)"
        }
    }
}

/// The shared store as a service on the system bus, as HealthKit's is: `org.hrmd.Health`,
/// interface `org.hrmd.Health1`. One more service in hrmd's group, beside ingestion: calls
/// are answered on tasks of their own and their store work runs on the store workers, so a
/// flood of calls never delays a frame's way to the store; queries read from their own
/// (WAL reader) connections. Waits for the system bus when there is none, and serves again
/// after the bus daemon restarts.
public struct HealthService: Service {
    private let store: HealthStore
    private let importer: RecordingImporter
    private let workers = StoreWorkers()
    private let version: String
    private let connect: @Sendable () throws(DBusError) -> DBusConnection
    private let logger: Logger

    /// The bounds on callers the bus layer enforces before a call reaches a request.
    static let callLimits = DBusCallLimits(
        pendingCalls: HealthBusLimits.pendingCalls, callsPerUser: HealthBusLimits.callsPerUser,
        arguments: DBusDecodeBudget(values: HealthBusLimits.argumentValues, stringBytes: HealthBusLimits.argumentStringBytes),
        argumentBytesPerUser: HealthBusLimits.argumentBytesPerUser, argumentBytesInAll: HealthBusLimits.argumentBytesInAll,
        descriptorsPerUser: HealthBusLimits.descriptorsPerUser, descriptorsInAll: HealthBusLimits.descriptorsInAll,
        replyBytes: HealthBusLimits.replyBytes)

    /// - Parameters:
    ///   - imports: what `Import` does with a recording (hrmd's ingest, as its recorder's source).
    ///   - connect: how to reach the bus (the system bus; tests may pass another).
    public init(
        store: HealthStore, version: String, imports: any RecordingImports, logger: Logger,
        connect: @escaping @Sendable () throws(DBusError) -> DBusConnection = { () throws(DBusError) in try DBusConnection.system() }
    ) {
        self.store = store
        self.version = version
        self.importer = RecordingImporter(imports: imports, workers: workers, logger: logger)
        self.connect = connect
        self.logger = logger
    }

    public func run() async throws {
        // A client that closes its pipe while the service writes must not end the daemon.
        signal(SIGPIPE, SIG_IGN)
        var waiting = false
        var attempt = 0
        while !Task.isCancelled && !Task.isShuttingDownGracefully {
            let connection: DBusConnection
            do {
                connection = try connect()
            } catch {
                if !waiting { logger.warning("store service: waiting (no system bus: \(error))") }
                waiting = true
                attempt += 1
                let pause = Duration.seconds(min(30, attempt))
                try? await cancelWhenGracefulShutdown { try await Task.sleep(for: pause) }
                continue
            }
            waiting = false
            attempt = 0
            try await serve(on: connection)
            connection.close()
            if !Task.isShuttingDownGracefully { logger.warning("store service: the system bus went away; connecting again") }
        }
    }

    /// Serves until graceful shutdown or until the connection closes.
    private func serve(on connection: DBusConnection) async throws {
        let calls = try await connection.exportObject(
            path: HealthBus.path, interface: HealthInterface.description(version: version), limits: Self.callLimits)
        do {
            try await connection.requestName(HealthBus.name)
        } catch {
            throw HealthServiceError.nameUnavailable("\(error)")
        }
        let departures = try await connection.signals(matching: DBusMatchRule(
            sender: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus", member: "NameOwnerChanged"))
        let authority = ManagerAuthority(connection: connection, logger: logger)
        let observers = ObserverRegistry()
        let identities = AppIdentities(connection: connection, logger: logger)
        let requests = RequestDispatch(
            store: store, authority: authority, observers: observers, importer: importer, workers: workers,
            userNames: UserNames(), identities: identities, tokens: AnchorTokens(secret: try store.serviceSecret()),
            logger: logger)
        let broadcaster = ChangeBroadcaster(connection: connection, observers: observers, requests: requests, logger: logger)
        let observation = store.observeChanges { broadcaster.note($0) }
        defer { observation.cancel() }
        logger.notice("store service: serving \(HealthBus.name) on the system bus")

        await withTaskGroup(of: Void.self) { background in
            background.addTask { await broadcaster.run() }
            background.addTask {
                for await signal in departures {
                    // NameOwnerChanged(name, old, new): a unique name with no new owner left the bus.
                    guard signal.arguments.count == 3, let name = signal.arguments[0].string, name.hasPrefix(":"),
                          signal.arguments[2].string == "" else { continue }
                    observers.removeAll(of: name)
                    authority.forget(name)
                    identities.forget(name)
                }
            }
            // Every call gets a task of its own as it comes, and runs in one of its user's turns:
            // the bus layer bounds how many calls each user has unanswered, and the turns how
            // many run, so one user's slow calls never hold another user's behind them.
            let turns = UserTurns(perUser: HealthBusLimits.runningCallsPerUser)
            await withDiscardingTaskGroup { answering in
                for await call in calls.cancelOnGracefulShutdown() {
                    answering.addTask { await turns.run(as: call.senderUID) { await requests.respond(to: call) } }
                }
            }
            broadcaster.finish()
            background.cancelAll()
        }
    }
}
