/// The `[mqtt]` section: hrmd publishes live heart rate to an MQTT broker, with Home Assistant
/// discovery (off unless the section is present; `broker` is then required).
///
/// ```ini
/// [mqtt]
/// broker = mqtt://broker.lan:1883          (mqtts://HOST[:PORT] for TLS; ports default to 1883 and 8883)
/// username = hrmd
/// password-file = /etc/hrmd/mqtt-password  (its first line is the password)
/// ca-file = /etc/hrmd/mqtt-ca.pem          (mqtts: the CA that signed the broker; default the system's store)
/// topic-prefix = hrmd
/// discovery-prefix = homeassistant
/// gateway = kitchen-pc                     (default the host name, as [a-z0-9_-])
/// client-id = hrmd-kitchen-pc              (default hrmd-GATEWAY)
/// rr = no                                  (yes: also publish RR intervals)
/// discovery = yes                          (no: no Home Assistant discovery documents)
/// ```
public struct MQTTConfiguration: Sendable, Equatable {
    /// The broker; nil until `broker =` is read (a section without it is an error).
    public var broker: MQTTBroker?
    public var username: String?
    /// The file whose first line is the password: never the password itself.
    public var passwordFile: String?
    /// The CA certificates that sign the broker's (mqtts); nil: the system's store.
    public var caFile: String?
    public var topicPrefix = "hrmd"
    public var discoveryPrefix = "homeassistant"
    /// nil: the host name, sanitised.
    public var gateway: String?
    /// nil: `hrmd-GATEWAY`.
    public var clientID: String?
    public var publishesRRIntervals = false
    public var publishesDiscovery = true
    /// Where each key was set, for errors about how keys go together.
    var lines: [String: Int] = [:]

    public init() {}

    /// The keys, in the order the documentation lists them.
    public static let keys = [
        "broker", "username", "password-file", "ca-file", "topic-prefix", "discovery-prefix", "gateway", "client-id", "rr", "discovery",
    ]

    mutating func set(_ key: String, _ value: String, line: Int, invalid: (String) -> ConfigurationError) throws(ConfigurationError) {
        defer { lines[key] = line }
        switch key {
        case "broker":
            guard let broker = MQTTBroker(value) else {
                throw invalid("expected mqtt://HOST[:PORT] or mqtts://HOST[:PORT], such as mqtt://127.0.0.1:1883")
            }
            self.broker = broker
        case "username":
            guard !value.isEmpty, value.utf8.count <= 256, !value.contains(where: \.isNewline) else { throw invalid("expected a user name") }
            username = value
        case "password-file":
            guard value.hasPrefix("/") else { throw invalid("expected an absolute path") }
            passwordFile = value
        case "ca-file":
            guard value.hasPrefix("/") else { throw invalid("expected an absolute path") }
            caFile = value
        case "topic-prefix":
            guard Self.isTopicPrefix(value) else { throw invalid("expected topic levels without + or #, not starting or ending with /") }
            topicPrefix = value
        case "discovery-prefix":
            guard Self.isTopicPrefix(value) else { throw invalid("expected topic levels without + or #, not starting or ending with /") }
            discoveryPrefix = value
        case "gateway":
            guard GatewayName.isValid(value) else {
                throw invalid("expected 1…64 characters of a-z, 0-9, _ and -")
            }
            gateway = value
        case "client-id":
            guard !value.isEmpty, value.utf8.count <= 128, value.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7F }) else {
                throw invalid("expected 1…128 printable ASCII characters without spaces")
            }
            clientID = value
        case "rr":
            guard let flag = Bool(configurationValue: value) else { throw invalid("expected yes or no") }
            publishesRRIntervals = flag
        case "discovery":
            guard let flag = Bool(configurationValue: value) else { throw invalid("expected yes or no") }
            publishesDiscovery = flag
        default:
            throw invalid("unknown key (known: \(Self.keys.joined(separator: ", ")))")
        }
    }

    /// Checks how the keys go together once the section is read: `broker` is required, a
    /// password needs a user name, a CA file needs TLS.
    func check(file: String, sectionLine: Int) throws(ConfigurationError) {
        guard let broker else {
            throw .invalidLine(file: file, line: sectionLine, key: "broker", message: "[mqtt] needs broker = mqtt://HOST:PORT or mqtts://HOST:PORT")
        }
        if passwordFile != nil && username == nil {
            throw .invalidLine(file: file, line: lines["password-file"] ?? sectionLine, key: "password-file", message: "a password needs username as well")
        }
        if caFile != nil && !broker.usesTLS {
            throw .invalidLine(file: file, line: lines["ca-file"] ?? sectionLine, key: "ca-file", message: "a CA file is for an mqtts:// broker")
        }
    }

    /// One or more topic levels: no wildcards, no empty first or last level, no NUL.
    static func isTopicPrefix(_ value: String) -> Bool {
        !value.isEmpty && value.utf8.count <= 128 && !value.hasPrefix("/") && !value.hasSuffix("/")
            && !value.contains(where: { $0 == "+" || $0 == "#" || $0 == "\u{0}" || $0.isNewline })
    }
}

/// `mqtt://HOST[:PORT]` or `mqtts://HOST[:PORT]` (`[v6]` for an IPv6 address).
public struct MQTTBroker: Sendable, Equatable, CustomStringConvertible {
    public var host: String
    public var port: Int
    /// mqtts: TLS to the broker.
    public var usesTLS: Bool

    public init(host: String, port: Int, usesTLS: Bool) {
        self.host = host
        self.port = port
        self.usesTLS = usesTLS
    }

    public init?(_ text: String) {
        let usesTLS: Bool
        let rest: Substring
        if text.hasPrefix("mqtt://") {
            usesTLS = false
            rest = text.dropFirst(7)
        } else if text.hasPrefix("mqtts://") {
            usesTLS = true
            rest = text.dropFirst(8)
        } else {
            return nil
        }
        let trimmed = rest.hasSuffix("/") ? rest.dropLast() : rest
        let defaultPort = usesTLS ? 8883 : 1883
        let hostAndPort: HTTPAddress?
        if trimmed.hasPrefix("[") {
            hostAndPort = trimmed.hasSuffix("]") ? HTTPAddress(trimmed + ":\(defaultPort)") : HTTPAddress(String(trimmed))
        } else if trimmed.contains(":") {
            hostAndPort = HTTPAddress(String(trimmed))
        } else {
            hostAndPort = HTTPAddress(trimmed + ":\(defaultPort)")
        }
        guard let hostAndPort, hostAndPort.port > 0 else { return nil }
        self.host = hostAndPort.host
        self.port = hostAndPort.port
        self.usesTLS = usesTLS
    }

    public var description: String {
        (usesTLS ? "mqtts://" : "mqtt://") + (host.contains(":") ? "[\(host)]" : host) + ":\(port)"
    }
}
