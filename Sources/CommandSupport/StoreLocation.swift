import Foundation
import HealthModel
import HealthStore

/// Where the store is: `--store PATH`, else `$HRMD_STORE`, else the configuration's, else the
/// system store `/var/lib/hrmd/hrmd.sqlite`. A `postgresql://…`, `postgres://…` or
/// `service=NAME` value names the central store instead (`centralConninfo`).
public struct StoreLocation: Sendable, Equatable {
    /// The system store the service uses.
    public static let systemPath = "/var/lib/hrmd/hrmd.sqlite"

    public var path: String
    /// Whether the user named it (flag, environment or configuration) or it is the default.
    public var isExplicit: Bool

    public init(flag: String?, configured: String? = nil, environment: [String: String] = ProcessInfo.processInfo.environment) {
        if let flag, !flag.isEmpty {
            self.init(path: flag, isExplicit: true)
        } else if let env = environment["HRMD_STORE"], !env.isEmpty {
            self.init(path: env, isExplicit: true)
        } else if let configured {
            self.init(path: configured, isExplicit: true)
        } else {
            self.init(path: Self.systemPath, isExplicit: false)
        }
    }

    public init(path: String, isExplicit: Bool) {
        self.path = path
        self.isExplicit = isExplicit
    }

    /// The libpq connection string when the location names the central store in PostgreSQL
    /// (`postgresql://…`, `postgres://…` or `service=NAME`) rather than a store file; nil for a file.
    public var centralConninfo: String? {
        Self.isCentral(path) ? path : nil
    }

    /// What a message may show of a central store's connection string: a URI's scheme, user,
    /// host and database without its password and query (`postgresql://user:secret@host/db?password=x`
    /// shows as `postgresql://user@host/db`), `service=NAME` without what follows; a file path
    /// as it is.
    public static func redacted(_ value: String) -> String {
        guard isCentral(value) else { return value }
        if value.hasPrefix("service=") { return String(value.prefix { !$0.isWhitespace }) }
        guard let scheme = value.range(of: "://") else { return value }
        let rest = value[scheme.upperBound...].prefix { $0 != "?" && $0 != "#" }
        let authorityEnd = rest.firstIndex(of: "/") ?? rest.endIndex
        var authority = String(rest[..<authorityEnd])
        if let at = authority.lastIndex(of: "@") {
            authority = String(authority[..<at].prefix { $0 != ":" }) + String(authority[at...])
        }
        return String(value[..<scheme.upperBound]) + authority + String(rest[authorityEnd...])
    }

    /// Whether `value` names a PostgreSQL database rather than a file.
    public static func isCentral(_ value: String) -> Bool {
        value.hasPrefix("postgresql://") || value.hasPrefix("postgres://") || value.hasPrefix("service=")
    }

    /// Opens the store, turning every failure into a one-line `CommandFailure` with the exit
    /// status documented in README; when the default system store cannot be used, it names the flag.
    public func open(_ mode: HealthStore.OpenMode, pageCacheKiB: Int? = nil) throws(CommandFailure) -> HealthStore {
        if centralConninfo != nil {
            throw CommandFailure(
                "\(Self.redacted(path)) names the central store in PostgreSQL, which is read-only here: it is written by the gateways' sync; name a store file",
                status: .usage)
        }
        do {
            return try HealthStore.open(
                path: path, mode: mode, pageCacheKiB: pageCacheKiB, upgradeProgress: UpgradeReport(path: path).progress)
        } catch {
            let hint = isExplicit ? "" : "; name a store with --store PATH or HRMD_STORE"
            switch error {
            case .missing:
                throw CommandFailure("\(error)\(hint)", status: isExplicit ? .noInput : .unavailable)
            case .cannotCreate:
                throw CommandFailure("\(error)\(hint)", status: isExplicit ? .cannotCreate : .unavailable)
            case .permissionDenied:
                throw CommandFailure("\(error)\(hint)", status: isExplicit ? .permissionDenied : .unavailable)
            case .cannotOpen where !isExplicit:
                throw CommandFailure("\(error)\(hint)", status: .unavailable)
            case .damaged, .foreignWriteAheadLog:
                throw CommandFailure("\(error)", status: .dataError)
            default:
                throw CommandFailure("\(error)", status: .failure)
            }
        }
    }
}

/// Tells the user, on standard error, that an older store is being converted: a line that
/// counts up on a terminal, one line at the end otherwise.
private struct UpgradeReport {
    let path: String

    var progress: HealthStore.UpgradeProgress {
        let path = path
        let terminal = isatty(STDERR_FILENO) == 1
        return { done, total in
            let finished = done >= total
            if terminal {
                let percent = total > 0 ? done * 100 / total : 100
                FileHandle.standardError.write(Data("\rupgrading \(path) to series storage: \(percent)% (\(done) of \(total) samples)\(finished ? "\n" : "")".utf8))
            } else if finished {
                FileHandle.standardError.write(Data("upgraded \(path) to series storage: \(total) samples\n".utf8))
            }
        }
    }
}
