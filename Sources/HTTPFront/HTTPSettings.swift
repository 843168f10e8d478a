import Foundation
import NIOSSL

/// How the HTTP front listens and what it allows: the address, TLS, and the bounds that keep a
/// hostile or broken client from costing more than its share.
public struct HTTPSettings: Sendable {
    /// `HOST:PORT`; port 0 picks a free one (the log line says which).
    public var host: String
    public var port: Int
    /// The certificate chain and private key (PEM files); nil serves plain HTTP, which a
    /// non-loopback address allows only with ``insecure``.
    public var certificate: String?
    public var privateKey: String?
    /// Plain HTTP on a non-loopback address, on purpose (logged as a warning at every start).
    public var insecure = false
    /// The dashboard's files (`index.html`, `overlay.html`, `day.html`, `static/`).
    public var webDirectory: String?
    /// Debian's browser libraries, served under `/javascript/`.
    public var javascriptDirectory = "/usr/share/javascript"
    /// The maximum heart rate zones are coloured from, and per-device maxima.
    public var maxHeartRate: Double = 190
    public var deviceMaxHeartRates: [String: Double] = [:]

    /// Connections at once; more wait in the listen backlog.
    public var maxConnections = 512
    /// Connections one remote address may hold at once; more are closed as they are accepted.
    public var maxConnectionsPerAddress = 64
    /// Live streams at once in all, and per token.
    public var maxLiveStreams = 400
    public var maxLiveStreamsPerToken = 16
    /// Events one live client may have queued before it gets a gap marker.
    public var liveQueueCapacity = 256
    /// Seconds a request head may take from the connection's start or the last answer's end,
    /// and a body from its head, before the connection is closed, whatever arrives meanwhile:
    /// a client that sends its headers one byte a minute is closed here (`[http] idle-timeout`).
    public var idleTimeoutSeconds: Int64 = 30
    /// Bytes of a request body at most (authorization requests are small).
    public static let maxBodyBytes = 64 * 1024
    /// Bytes of all header fields at most.
    public static let maxHeaderBytes = 16 * 1024

    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// Where the dashboard's files and the OpenAPI document are when the configuration does
    /// not say: installed beside the program (`PREFIX/share/hrmd/web` for `PREFIX/bin/hrmd`),
    /// else in the source tree the program was built in (`web/` above `.build/debug`); the
    /// first that holds `index.html` or `openapi.json`, nil when none does.
    public static func defaultWebDirectory(executable: String) -> String? {
        let resolved = URL(fileURLWithPath: executable).resolvingSymlinksInPath().deletingLastPathComponent()
        let candidates = [
            resolved.appendingPathComponent("../share/hrmd/web").standardized.path,
            resolved.appendingPathComponent("../../web").standardized.path,
            resolved.appendingPathComponent("../../../web").standardized.path,
        ]
        return candidates.first {
            FileManager.default.fileExists(atPath: $0 + "/index.html") || FileManager.default.fileExists(atPath: $0 + "/openapi.json")
        }
    }

    /// Whether the address is one only this machine reaches (parsed: `127.example.com` is not).
    public var isLoopback: Bool { LoopbackAddress.isLoopback(host) }
}

/// Why the HTTP front cannot start: one line that says what to change.
public struct HTTPFrontError: Error, CustomStringConvertible, Sendable {
    public let description: String

    public init(_ description: String) { self.description = description }
}
