import CPostgreSQL
import Secrets

/// A libpq connection string (a `postgresql://` URI, `service=NAME`, or `key = value` pairs)
/// read the way libpq reads it (`PQconninfoParse`), so that what hrmd decides about it (does it
/// carry a password, what may a message show) holds for every spelling libpq accepts:
/// `password = pw`, a tab before `password=`, `?passw%6Frd=pw` in a URI.
public struct ConnectionString: Sendable {
    /// The string as given.
    public let secret: Secret
    /// The keywords it sets and their values, as libpq parsed them.
    public let keywords: [String: String]

    /// Parses `conninfo`; throws `.invalidConnectionString` when libpq cannot read it (the
    /// message does not repeat the string, which may hold a password).
    public init(_ conninfo: Secret) throws(ConnectionStringError) {
        let pq: LibPQ
        do { pq = try LibPQ.load() } catch { throw .libraryMissing("\(error)") }
        var message: UnsafeMutablePointer<CChar>?
        guard let options = pq.conninfoParse(conninfo.revealed, &message) else {
            if let message { pq.freeMemory(message) }
            throw .unreadable
        }
        defer { pq.conninfoFree(options) }
        var keywords: [String: String] = [:]
        var option = options
        while let keyword = option.pointee.keyword {
            if let value = option.pointee.val { keywords[String(cString: keyword)] = String(cString: value) }
            option += 1
        }
        secret = conninfo
        self.keywords = keywords
    }

    /// Whether libpq would take a password from the string itself.
    public var holdsPassword: Bool { keywords["password"] != nil }

    /// What a message may show: the host, port, database, user and service it names (never a
    /// password, nor options that might carry one), as `key=value` pairs.
    public var redacted: String {
        let shown = ["service", "host", "hostaddr", "port", "dbname", "user"]
        let pairs = shown.compactMap { key in keywords[key].map { "\(key)=\($0)" } }
        return pairs.isEmpty ? "(libpq's defaults)" : pairs.joined(separator: " ")
    }
}

/// Why a connection string cannot be used.
public enum ConnectionStringError: Error, Equatable, CustomStringConvertible {
    /// libpq cannot read it.
    case unreadable
    /// libpq itself cannot be loaded.
    case libraryMissing(String)

    public var description: String {
        switch self {
        case .unreadable: "not a connection string libpq can read"
        case .libraryMissing(let why): why
        }
    }
}
