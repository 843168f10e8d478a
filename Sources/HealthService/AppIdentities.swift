@preconcurrency import Glibc
import HealthRequests
import HealthWire
import Logging
import SDBus
import Synchronization

/// Which application a caller is, where Linux can tell without asking it: the label it cannot
/// choose, looked up once per unique bus name (never reused on a bus, so an answer never goes
/// stale) and remembered, the oldest forgotten first past `capacity`.
///
/// In this order: a snap (its AppArmor label, `LinuxSecurityLabel` of the bus daemon's
/// credentials), a Flatpak application (`/.flatpak-info` in the process's own root), a
/// systemd service (its cgroup). Anything else, or a process whose /proc this service may not
/// read, declares its own application name (nil).
///
/// What a label proves: a sandboxed or confined application cannot present another's label,
/// nor pass for an unconfined one, so its samples and grants are its own. An unconfined
/// program of the same user is not held back by this (it may start a snap or a Flatpak
/// application, or make a mount namespace of its own with a `.flatpak-info` of its choosing);
/// the user part of every source, from the uid, is what separates users.
final class AppIdentities: Sendable {
    enum Failure: Error {
        /// The caller's process exited, or its connection left, while it was being looked at.
        case vanished
        /// A Flatpak sandbox whose `.flatpak-info` names no application (a bare runtime).
        case unnamedSandbox
        case bus(DBusError)

        init(_ error: DBusError) {
            self = error.name == "org.freedesktop.DBus.Error.NameHasNoOwner" ? .vanished : .bus(error)
        }

        /// The error reply of a call whose caller could not be identified.
        var failure: RequestFailure {
            switch self {
            case .vanished: RequestFailure(.failed, "the caller left while it was being identified")
            case .unnamedSandbox: .accessDenied("a Flatpak sandbox whose .flatpak-info names no application may not use the store")
            case .bus(let error): RequestFailure(.failed, "the caller could not be identified: \(error)")
            }
        }
    }

    private let connection: DBusConnection
    private let logger: Logger
    private let capacity: Int
    private let known: Mutex<UniqueNameCache<VerifiedApp?>>
    private let warnedUnreadable = Atomic<Bool>(false)

    init(connection: DBusConnection, logger: Logger, capacity: Int = 1024) {
        self.connection = connection
        self.logger = logger
        self.capacity = capacity
        known = Mutex(UniqueNameCache(capacity: capacity))
    }

    /// The verified application of the connection `busName` (a uid's process), or nil when it
    /// declares its own.
    func application(of busName: String, uid: UInt32) async throws(Failure) -> VerifiedApp? {
        if let remembered = known.withLock({ $0[busName] }) { return remembered }
        let answer = try await lookUp(busName, uid: uid)
        known.withLock { $0.insert(answer, for: busName) }
        return answer
    }

    /// Forgets a connection that left the bus.
    func forget(_ busName: String) {
        known.withLock { $0.remove(busName) }
    }

    /// Logs the first time /proc lets the service down (its unit's `ProtectProc=`, no
    /// CAP_SYS_PTRACE for other users' roots): callers are still served, as self-declared.
    private func warnOnce(_ message: String) {
        if !warnedUnreadable.exchange(true, ordering: .relaxed) { logger.warning("store service: \(message)") }
    }

    private func lookUp(_ busName: String, uid: UInt32) async throws(Failure) -> VerifiedApp? {
        let credentials: DBusConnectionCredentials
        do { credentials = try await connection.credentials(of: busName) } catch { throw Failure(error) }
        if let label = credentials.securityLabel, let snap = AppLabels.snap(fromSecurityLabel: label) { return snap }
        guard let pid = credentials.processID, pid > 0, let processID = pid_t(exactly: pid) else { return nil }
        let info: String?
        let cgroup: String
        do throws(PeerProcess.Failure) {
            let process = try PeerProcess(pid: processID)
            do { info = try process.flatpakInfo() } catch {
                // /proc/PID/root needs ptrace access, /proc/PID/cgroup only a visible process.
                guard case .unreadable(let code) = error else { throw error }
                warnOnce("cannot read the root of callers (\(String(cString: strerror(code)))); Flatpak applications declare their own names")
                info = nil
            }
            cgroup = info == nil ? try process.cgroup() : ""
            try process.checkAlive()
        } catch {
            guard case .unreadable(let code) = error else { throw .vanished }
            warnOnce("cannot read /proc of callers (\(String(cString: strerror(code)))); Flatpak applications and services declare their own names")
            return nil
        }
        // The connection must still be the pinned process's (see PeerProcess: the PID's race).
        let again: DBusConnectionCredentials
        do { again = try await connection.credentials(of: busName) } catch { throw Failure(error) }
        guard again.processID == pid else { throw .vanished }
        if let info {
            guard let app = AppLabels.flatpakApp(fromInfo: info) else { throw .unnamedSandbox }
            return app
        }
        return AppLabels.serviceUnit(fromCgroup: cgroup, uid: uid)
    }
}
