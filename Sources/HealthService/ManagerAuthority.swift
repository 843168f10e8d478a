@preconcurrency import Glibc
import HealthRequests
import HealthWire
import Logging
import SDBus
import Synchronization

/// Decides whether a caller manages the store (grants, reads every source, deletes any
/// source's samples, imports): root and the service's own user always; anyone else when
/// polkit allows the action `org.hrmd.health.manage` (members of group hrmd by the
/// shipped rules), asking the user for a password when the caller allows that.
final class ManagerAuthority: Sendable {
    private let connection: DBusConnection
    private let serviceUID: uid_t
    private let logger: Logger
    /// Recent non-interactive answers per caller: queries ask on every call, and a burst of
    /// them must not become a burst of polkit calls. Unique bus names are never reused.
    private let recent = Mutex<[String: (manager: Bool, at: ContinuousClock.Instant)]>([:])
    private let polkitMissingLogged = Atomic<Bool>(false)
    /// The polkit checks under way. polkit may take as long as a person takes to answer its
    /// password prompt, or hang (an authentication agent that never answers): such checks then
    /// hold these slots and nothing else, so other users' calls are served meanwhile. As many
    /// per user as one user's calls that run at once (so a user is never refused for its own
    /// checks, only made to wait its turn), and eight users' worth in all.
    private let checks = UserSlots(
        perUser: HealthBusLimits.runningCallsPerUser, inAll: 8 * HealthBusLimits.runningCallsPerUser,
        what: "authorization checks under way with polkit")

    static let rememberFor: Duration = .seconds(2)
    static let polkitTimeout: Duration = .seconds(30)
    /// Long enough for a person to type a password when polkit asks.
    static let interactiveTimeout: Duration = .seconds(120)

    init(connection: DBusConnection, serviceUID: uid_t = geteuid(), logger: Logger) {
        self.connection = connection
        self.serviceUID = serviceUID
        self.logger = logger
    }

    /// Whether `caller` may manage the store. `interactive` lets polkit ask the user for a
    /// password when the caller allows it (the methods only managers may call); queries ask
    /// without interaction, so that a plain application is never prompted. Checks under way
    /// with polkit are bounded per user and in all (``checks``): past them this fails
    /// with LimitsExceeded, so a user whose checks hang holds only its own.
    func isManager(_ caller: Caller, interactive: Bool) async throws(RequestFailure) -> Bool {
        if caller.uid == 0 || caller.uid == serviceUID { return true }
        let now = ContinuousClock.now
        if !interactive, let known = recent.withLock({ $0[caller.busName] }), now - known.at < Self.rememberFor {
            return known.manager
        }
        let allowed = try await checks.run(for: caller.uid) { () async throws(RequestFailure) in
            await askPolkit(caller, interactive: interactive && caller.allowsInteraction)
        }
        recent.withLock { answers in
            if answers.count > 4096 { answers = answers.filter { now - $0.value.at < Self.rememberFor } }
            answers[caller.busName] = (allowed, now)
        }
        return allowed
    }

    /// Fails with AccessDenied unless `caller` is a manager.
    func requireManager(_ caller: Caller, for what: String) async throws(RequestFailure) {
        guard try await isManager(caller, interactive: true) else {
            logger.info("refused: \(what) needs a manager", metadata: ["user": .string(caller.user), "uid": "\(caller.uid)"])
            throw .accessDenied(
                "\(what) needs a manager of the store: root, a member of group hrmd, or a user polkit allows \(HealthBus.manageAction)")
        }
    }

    /// Forgets what was remembered about a caller that left the bus.
    func forget(_ busName: String) {
        _ = recent.withLock { $0.removeValue(forKey: busName) }
    }

    private func askPolkit(_ caller: Caller, interactive: Bool) async -> Bool {
        let subject = DBusValue.structure([
            .string("system-bus-name"),
            .dictionary(key: "s", value: "v", [DBusDictionaryEntry(.string("name"), .variant(.string(caller.busName)))]),
        ])
        do {
            let reply = try await connection.call(
                destination: "org.freedesktop.PolicyKit1", path: "/org/freedesktop/PolicyKit1/Authority",
                interface: "org.freedesktop.PolicyKit1.Authority", member: "CheckAuthorization",
                arguments: [
                    subject, .string(HealthBus.manageAction), .dictionary(key: "s", value: "s", []),
                    .uint32(interactive ? 1 : 0), .string(""),
                ],
                timeout: interactive ? Self.interactiveTimeout : Self.polkitTimeout)
            guard case .structure(let result)? = reply.first, let authorized = result.first?.bool else {
                logger.warning("polkit answered CheckAuthorization with an unexpected reply; treating the caller as no manager", metadata: ["user": .string(caller.user)])
                return false
            }
            return authorized
        } catch {
            if error.name == HealthBusError.serviceUnknown || error.name == HealthBusError.nameHasNoOwner {
                if !polkitMissingLogged.exchange(true, ordering: .relaxed) {
                    logger.warning("polkit is not running: only root and the service's user manage the store")
                }
            } else {
                logger.warning("polkit CheckAuthorization failed: \(error)", metadata: ["user": .string(caller.user)])
            }
            return false
        }
    }
}
