import Foundation
import Secrets

/// The `[sync]` section: hrmd sends what it records to a central PostgreSQL store (off unless
/// the section is present; `url` is then required).
///
/// ```ini
/// [sync]
/// url = postgresql://gw_room1@db.lan/hrmd?sslmode=verify-full   (or service=hrmd in pg_service.conf)
/// gateway = room1                          (default the host name, as [a-z0-9_-])
/// batch = 20000                            (samples per batch, at most)
/// timeout = 15                             (seconds a connect or a statement may take)
/// retry-max = 60                           (seconds between attempts at most, after failures)
/// ```
///
/// The URL names no password: libpq takes it from its usual places (a passfile, a service
/// file, `PGPASSWORD` in the unit's environment). hrmd reads the URL as libpq does when it
/// starts and refuses one that carries a password, however spelled; it never prints the URL.
public struct SyncConfiguration: Sendable, Equatable {
    /// The libpq connection string: a `postgresql://` URI, `service=NAME`, or `key=value` pairs.
    public var url: Secret?
    /// nil: the host name, sanitised.
    public var gateway: String?
    public var batchSize = 20000
    public var timeoutSeconds = 15.0
    public var retryMaximumSeconds = 60.0

    public init() {}

    /// The keys, in the order the documentation lists them.
    public static let keys = ["url", "gateway", "batch", "timeout", "retry-max"]

    mutating func set(_ key: String, _ value: String, invalid: (String) -> ConfigurationError) throws(ConfigurationError) {
        switch key {
        case "url":
            guard Self.isConnectionString(value) else {
                throw invalid("expected a libpq connection string: postgresql://USER@HOST/DATABASE, service=NAME or key=value pairs")
            }
            url = Secret(value)
        case "gateway":
            guard GatewayName.isValid(value) else {
                throw invalid("expected 1…64 characters of a-z, 0-9, _ and -")
            }
            gateway = value
        case "batch":
            guard let count = Int(value), (1...100_000).contains(count) else { throw invalid("expected 1…100000 samples") }
            batchSize = count
        case "timeout":
            guard let seconds = Double(value), seconds >= 1, seconds <= 600 else { throw invalid("expected 1…600 seconds") }
            timeoutSeconds = seconds
        case "retry-max":
            guard let seconds = Double(value), seconds >= 1, seconds <= 3600 else { throw invalid("expected 1…3600 seconds") }
            retryMaximumSeconds = seconds
        default:
            throw invalid("unknown key (known: \(Self.keys.joined(separator: ", ")))")
        }
    }

    /// Checks the section once read: `url` is required.
    func check(file: String, sectionLine: Int) throws(ConfigurationError) {
        guard url != nil else {
            throw .invalidLine(file: file, line: sectionLine, key: "url", message: "[sync] needs url = postgresql://… or url = service=NAME")
        }
    }

    /// A URI (`postgresql://`, `postgres://`) or `key=value` pairs, one line.
    static func isConnectionString(_ value: String) -> Bool {
        guard !value.isEmpty, value.utf8.count <= 4096, !value.contains(where: { $0.isNewline || $0 == "\u{0}" }) else { return false }
        return value.hasPrefix("postgresql://") || value.hasPrefix("postgres://") || value.contains("=")
    }
}
