@preconcurrency import Glibc
import HealthRequests
import Synchronization
import HealthWire

/// Who is calling, as the bus daemon says: the uid it verified and the login name of that
/// uid in the system's user database, and the application when a label the caller cannot
/// choose names it (`AppIdentities`). Never anything the caller says about itself.
struct Caller: Sendable, Hashable {
    /// The caller's unique bus name (`:1.42`): the address of its replies and signals.
    let busName: String
    let uid: uid_t
    /// The login name of `uid`, or `uid-N` when the user database has none.
    let user: String
    /// Whether the caller allows polkit to ask its user for a password.
    let allowsInteraction: Bool
    /// The application a label names (Flatpak app id, snap, systemd service), nil when the
    /// caller declares its own.
    var verifiedApp: VerifiedApp? = nil

    /// The source of the caller's application `app`: `USER/APP`, checked. A caller with a
    /// verified application is `USER/KIND:NAME` whatever it passes: `app` is ignored.
    func source(app: String) throws(RequestFailure) -> String {
        if let verifiedApp { return AppName.source(user: user, app: verifiedApp.description) }
        do { try AppName.validate(app) } catch { throw .invalidArguments(error.description) }
        return AppName.source(user: user, app: app)
    }
}

/// Login names of uids, from the system's user database (`getpwuid_r`), remembered: a uid's
/// name does not change while the daemon runs often enough to matter, and a lookup may read
/// files or ask NSS modules.
final class UserNames: Sendable {
    private let cache = Mutex<[uid_t: String]>([:])
    private static let cacheLimit = 1024

    func name(of uid: uid_t) -> String {
        if let known = cache.withLock({ $0[uid] }) { return known }
        let name = Self.lookUp(uid) ?? "uid-\(uid)"
        cache.withLock { names in
            if names.count >= Self.cacheLimit { names.removeAll() }
            names[uid] = name
        }
        return name
    }

    private static func lookUp(_ uid: uid_t) -> String? {
        var entry = passwd()
        var result: UnsafeMutablePointer<passwd>?
        var size = max(1024, Int(sysconf(Int32(_SC_GETPW_R_SIZE_MAX))))
        while size <= 1 << 20 {
            var buffer = [CChar](repeating: 0, count: size)
            let status = getpwuid_r(uid, &entry, &buffer, size, &result)
            if status == ERANGE {
                size *= 2
                continue
            }
            guard status == 0, result != nil, let name = entry.pw_name else { return nil }
            return String(cString: name)
        }
        return nil
    }
}
