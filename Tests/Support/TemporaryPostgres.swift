@preconcurrency import Glibc
import Foundation
import PostgresClient

/// A PostgreSQL server of its own for a test: initdb into a fresh temporary directory, started
/// with pg_ctl on a Unix socket in that directory and a free loopback TCP port, fsync off;
/// stopped and removed by `stop()` or when released. Local (socket) connections are trusted;
/// TCP ones need the password (SCRAM) of the superuser `postgres`, so password tests work.
/// PostgreSQL refuses to run as root: as root, its programs run as nobody (65534) through
/// setpriv, and the directory belongs to nobody. Every wait is bounded.
public final class TemporaryPostgres: @unchecked Sendable {
    /// The superuser's name and password.
    public static let superuser = "postgres"
    public let password: String
    /// The directory the socket is in (and the data directory below it).
    public let directory: TemporaryDirectory
    /// The loopback TCP port it listens on.
    public let port: Int
    private let binaries: String
    private var running = true

    /// How a test connects: the Unix socket (trusted) or loopback TCP (password).
    public enum Transport: Sendable { case socket, tcp }

    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    public init() async throws {
        guard let binaries = Self.findBinaries() else { throw Failure(description: "no PostgreSQL server binaries (postgresql-15)") }
        self.binaries = binaries
        directory = try TemporaryDirectory(prefix: "hrmd-pg")
        password = "pw-\(UUID().uuidString.prefix(12))"
        port = try Self.freePort()
        let data = directory.file("data")
        let passwordFile = directory.file("password")
        try password.write(toFile: passwordFile, atomically: false, encoding: .utf8)
        if geteuid() == 0 {
            chown(directory.path, 65534, 65534)
            chown(passwordFile, 65534, 65534)
        }
        chmod(directory.path, 0o700)
        try await run(
            "initdb",
            [
                "-D", data, "-U", Self.superuser, "--pwfile=\(passwordFile)", "--auth-local=trust", "--auth-host=scram-sha-256",
                "-E", "UTF8", "--locale=C", "--no-sync", "--no-instructions",
            ])
        let options = [
            "-c fsync=off", "-c synchronous_commit=off", "-c full_page_writes=off", "-c listen_addresses=127.0.0.1", "-p \(port)",
            "-c unix_socket_directories=\(directory.path)", "-c max_connections=40", "-c shared_buffers=16MB",
        ].joined(separator: " ")
        try await run("pg_ctl", ["-D", data, "-l", directory.file("server.log"), "-w", "-t", "30", "-o", options, "start"])
    }

    deinit { stop() }

    /// One server shared by a test process, started on first use and stopped when the process
    /// exits (atexit: a static is never released, and pg_ctl's server outlives its parent).
    public static func shared() async throws -> TemporaryPostgres {
        if let server = Shared.lock.withLock({ Shared.server }) { return server }
        let fresh = try await TemporaryPostgres()
        return Shared.lock.withLock {
            if let server = Shared.server { return server }
            Shared.server = fresh
            atexit { TemporaryPostgres.stopShared() }
            return fresh
        }
    }

    private static func stopShared() {
        let server = Shared.lock.withLock { () -> TemporaryPostgres? in
            defer { Shared.server = nil }
            return Shared.server
        }
        server?.stop()
        if let server { try? FileManager.default.removeItem(atPath: server.directory.path) }
    }

    private enum Shared {
        static let lock = NSLock()
        nonisolated(unsafe) static var server: TemporaryPostgres?
    }

    /// A libpq connection string for this server.
    public func conninfo(
        over transport: Transport = .socket, user: String = TemporaryPostgres.superuser, password: String? = nil, database: String = "postgres"
    ) -> String {
        var pairs = ["host": transport == .socket ? directory.path : "127.0.0.1", "port": String(port), "user": user, "dbname": database]
        if let password = password ?? (transport == .tcp && user == Self.superuser ? self.password : nil) { pairs["password"] = password }
        return pairs.sorted { $0.key < $1.key }.map { "\($0.key)=\(Self.quote($0.value))" }.joined(separator: " ")
    }

    /// A connection as the superuser over the socket (or as told).
    public func connect(
        over transport: Transport = .socket, user: String = TemporaryPostgres.superuser, password: String? = nil, database: String = "postgres",
        timeout: Duration = .seconds(10)
    ) throws(PostgresError) -> PostgresConnection {
        try PostgresConnection(conninfo: conninfo(over: transport, user: user, password: password, database: database), timeout: timeout)
    }

    /// Runs SQL (several statements allowed) as the superuser on a connection of its own.
    public func psql(_ sql: String, database: String = "postgres") throws(PostgresError) {
        let connection = try connect(database: database)
        defer { connection.close() }
        try connection.executeScript(sql)
    }

    /// Runs one statement as the superuser on a connection of its own and returns its rows.
    @discardableResult
    public func execute(_ sql: String, _ parameters: [String?] = [], database: String = "postgres") throws(PostgresError) -> PostgresResult {
        let connection = try connect(database: database)
        defer { connection.close() }
        return try connection.execute(sql, parameters)
    }

    /// The server's log so far.
    public var log: String { (try? String(contentsOfFile: directory.file("server.log"), encoding: .utf8)) ?? "" }

    /// Stops the server (immediate shutdown, bounded) and removes its files. Idempotent.
    public func stop() {
        guard running else { return }
        running = false
        let arguments = ["-D", directory.file("data"), "-m", "immediate", "-w", "-t", "30", "stop"]
        if let child = try? ChildProcess(launcher, launchArguments("pg_ctl", arguments), environment: environment, outputDirectory: directory.path) {
            let deadline = ContinuousClock.now.advanced(by: .seconds(35))
            while child.isRunning && ContinuousClock.now < deadline { usleep(20_000) }
        }
    }

    // MARK: Running PostgreSQL's programs

    private var launcher: String { geteuid() == 0 ? "/usr/bin/setpriv" : "\(binaries)/pg_ctl" }

    private func launchArguments(_ program: String, _ arguments: [String]) -> [String] {
        if geteuid() == 0 { return ["--reuid=65534", "--regid=65534", "--clear-groups", "\(binaries)/\(program)"] + arguments }
        return arguments
    }

    private var environment: [String: String] {
        ["PATH": "/usr/bin:/bin", "LC_ALL": "C", "HOME": directory.path, "TZ": "UTC"]
    }

    private func run(_ program: String, _ arguments: [String]) async throws {
        let executable = geteuid() == 0 ? "/usr/bin/setpriv" : "\(binaries)/\(program)"
        let result = try await ChildProcess.run(
            executable, launchArguments(program, arguments), environment: environment, in: directory, timeout: .seconds(60))
        guard result.exitCode == 0 else {
            throw Failure(description: "\(program) failed (\(result.termination)): \(result.stderr) \(result.stdout) \(log)")
        }
    }

    /// `pg_config --bindir` when it names a directory with the server's programs; else the
    /// newest /usr/lib/postgresql/*/bin.
    static func findBinaries() -> String? {
        let fileManager = FileManager.default
        if let child = try? ChildProcess("/usr/bin/pg_config", ["--bindir"], outputDirectory: NSTemporaryDirectory()) {
            let deadline = ContinuousClock.now.advanced(by: .seconds(10))
            while child.isRunning && ContinuousClock.now < deadline { usleep(10_000) }
            let output = child.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)
            try? fileManager.removeItem(atPath: child.stdoutPath)
            try? fileManager.removeItem(atPath: child.stderrPath)
            if !output.isEmpty, fileManager.isExecutableFile(atPath: "\(output)/initdb"), fileManager.isExecutableFile(atPath: "\(output)/pg_ctl") {
                return output
            }
        }
        let versions = ((try? fileManager.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? []).compactMap(Int.init).sorted()
        return versions.reversed().map { "/usr/lib/postgresql/\($0)/bin" }.first { fileManager.isExecutableFile(atPath: "\($0)/initdb") }
    }

    /// A loopback TCP port nothing listens on now (bound to port 0 and released).
    static func freePort() throws -> Int {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw POSIXError(.EIO) }
        defer { Glibc.close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(socket, pointer, length) == 0 && getsockname(socket, pointer, &length) == 0
            }
        }
        guard bound else { throw POSIXError(.EADDRINUSE) }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    private static func quote(_ value: String) -> String {
        "'" + value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "\\'") + "'"
    }
}
