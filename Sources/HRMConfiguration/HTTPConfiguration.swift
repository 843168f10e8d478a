/// The `[http]` section: hrmd's HTTP front (off unless the section or `--http` turns it on).
///
/// ```ini
/// [http]
/// listen = 127.0.0.1:8080
/// certificate = /etc/hrmd/tls/cert.pem     (both, for TLS: needed on a non-loopback address)
/// key = /etc/hrmd/tls/key.pem
/// insecure = no                           (yes: plain HTTP on a non-loopback address)
/// web = /usr/share/hrmd/web               (the dashboard's files)
/// max-heart-rate = 190                    (or age = 40: 208 − 0.7 × age)
/// max-connections = 512
/// max-connections-per-address = 64       (at most max-connections)
/// max-live-streams = 400
/// idle-timeout = 30                       (seconds for a request head, and for its body)
/// ```
public struct HTTPConfiguration: Sendable, Equatable {
    public var address = HTTPAddress(host: "127.0.0.1", port: 8080)
    public var certificate: String?
    public var key: String?
    public var insecure = false
    public var webDirectory: String?
    /// The default maximum heart rate for zone colours, count/min.
    public var maxHeartRate: Double = 190
    public var maxConnections = 512
    /// Connections one remote address may hold at once (at most ``maxConnections``).
    public var maxConnectionsPerAddress = 64
    public var maxLiveStreams = 400
    /// Seconds a request head may take (from the connection's start or the last answer), and a
    /// body from its head, before the connection is closed.
    public var idleTimeoutSeconds = 30

    public init() {}

    /// The maximum heart rate estimated from an age (Tanaka: 208 − 0.7 × age).
    public static func estimatedMaxHeartRate(age: Double) -> Double { (208 - 0.7 * age).rounded() }

    mutating func set(_ key: String, _ value: String, invalid: (String) -> ConfigurationError) throws(ConfigurationError) {
        switch key {
        case "listen":
            guard let address = HTTPAddress(value) else { throw invalid("expected HOST:PORT, such as 127.0.0.1:8080 or [::1]:8080") }
            self.address = address
        case "certificate":
            guard value.hasPrefix("/") else { throw invalid("expected an absolute path") }
            certificate = value
        case "key":
            guard value.hasPrefix("/") else { throw invalid("expected an absolute path") }
            self.key = value
        case "insecure":
            guard let flag = Bool(configurationValue: value) else { throw invalid("expected yes or no") }
            insecure = flag
        case "web":
            guard value.hasPrefix("/") else { throw invalid("expected an absolute path") }
            webDirectory = value
        case "max-heart-rate":
            guard let bpm = Double(value), (100...250).contains(bpm) else { throw invalid("expected 100…250 count/min") }
            maxHeartRate = bpm
        case "age":
            guard let age = Double(value), (5...110).contains(age) else { throw invalid("expected an age of 5…110 years") }
            maxHeartRate = Self.estimatedMaxHeartRate(age: age)
        case "max-connections":
            guard let count = Int(value), (1...10_000).contains(count) else { throw invalid("expected 1…10000") }
            maxConnections = count
        case "max-connections-per-address":
            guard let count = Int(value), (1...10_000).contains(count) else { throw invalid("expected 1…10000") }
            maxConnectionsPerAddress = count
        case "max-live-streams":
            guard let count = Int(value), (1...10_000).contains(count) else { throw invalid("expected 1…10000") }
            maxLiveStreams = count
        case "idle-timeout":
            guard let seconds = Int(value), (1...600).contains(seconds) else { throw invalid("expected 1…600 seconds") }
            idleTimeoutSeconds = seconds
        default:
            throw invalid(
                "unknown key (known: listen, certificate, key, insecure, web, max-heart-rate, age, max-connections, max-connections-per-address, max-live-streams, idle-timeout)")
        }
    }
}

/// `HOST:PORT` (`[v6]:PORT` for an IPv6 address); port 0 picks a free one.
public struct HTTPAddress: Sendable, Equatable, CustomStringConvertible {
    public var host: String
    public var port: Int

    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    public init?(_ text: String) {
        let host: Substring
        let port: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]"), text[text.index(after: close)...].hasPrefix(":") else { return nil }
            host = text[text.index(after: text.startIndex)..<close]
            port = text[text.index(close, offsetBy: 2)...]
        } else {
            guard let colon = text.lastIndex(of: ":") else { return nil }
            host = text[..<colon]
            port = text[text.index(after: colon)...]
        }
        guard !host.isEmpty, host.utf8.count <= 253,
              host.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "." || $0 == "-" || $0 == ":" }),
              let number = Int(port), (0...65535).contains(number)
        else { return nil }
        self.host = String(host)
        self.port = number
    }

    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}
