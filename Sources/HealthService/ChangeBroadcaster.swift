import HealthRequests
import HealthModel
import HealthStore
import HealthWire
import Logging
import SDBus

/// Tells observers that samples changed: `SamplesChanged(type, anchor)` sent to each
/// observer alone (unicast, so heart-rate activity never leaks to the whole bus), and only
/// to an observer whose ``ReadScope`` admits a source whose samples changed. Commits that
/// come while it is sending are merged into one signal per observer and type.
final class ChangeBroadcaster: Sendable {
    private let connection: DBusConnection
    private let observers: ObserverRegistry
    private let requests: RequestDispatch
    private let logger: Logger
    private let pending = PendingChanges()
    private let doorbell: AsyncStream<Void>
    private let ring: AsyncStream<Void>.Continuation

    init(connection: DBusConnection, observers: ObserverRegistry, requests: RequestDispatch, logger: Logger) {
        self.connection = connection
        self.observers = observers
        self.requests = requests
        self.logger = logger
        (doorbell, ring) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
    }

    /// Called by the store after a commit, on the writing thread: cheap, never blocks.
    func note(_ change: StoreChange) {
        pending.merge(change)
        ring.yield()
    }

    func finish() { ring.finish() }

    func run() async {
        for await _ in doorbell {
            let (anchor, changed) = pending.take()
            // The grants are read from the store at most once per round, and only when an
            // observer's scope without them admits none of the changed sources.
            var grants: [AuthorizationAccessEntry]?
            for (type, sources) in changed {
                for recipient in observers.observers(of: type) {
                    func seesAChange(mayReadType: Bool) -> Bool {
                        let scope = ReadScope(reader: recipient.source, isManager: recipient.isManager, mayReadType: mayReadType)
                        return sources.contains(where: scope.admits)
                    }
                    if !seesAChange(mayReadType: false) {
                        if grants == nil { grants = await readGrants() }
                        let mayRead = grants?.contains { $0.type == type && $0.source == recipient.source } == true
                        guard seesAChange(mayReadType: mayRead) else { continue }
                    }
                    let view = CallerView(source: recipient.source, isManager: recipient.isManager, tokens: requests.tokens)
                    do {
                        try await connection.emitSignal(
                            path: HealthBus.path, interface: HealthBus.interface, member: "SamplesChanged",
                            arguments: [.string(type.identifier), .uint64(view.anchor(anchor))],
                            destination: recipient.busName)
                    } catch {
                        logger.debug("SamplesChanged to \(recipient.busName) failed: \(error)")
                    }
                }
            }
        }
    }

    /// Every granted read authorization; none when the store cannot say.
    private func readGrants() async -> [AuthorizationAccessEntry] {
        (try? await requests.onStore { store throws(HealthStoreError) in
            try store.authorizationAccessEntries().filter { $0.access == .read && $0.status == .sharingAuthorized }
        }) ?? []
    }
}
