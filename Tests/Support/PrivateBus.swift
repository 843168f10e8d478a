@preconcurrency import Glibc
import Foundation

/// A private `dbus-daemon` for tests, listening on a socket in a temporary directory and
/// killed when this object goes away (or on `stop()`).
public final class PrivateBus: @unchecked Sendable {
    public struct StartFailed: Error, CustomStringConvertible {
        public var description: String
    }

    public let directory: TemporaryDirectory
    /// `unix:path=…`, for `DBUS_SYSTEM_BUS_ADDRESS` or a direct connection.
    public let address: String
    private var pid: pid_t

    public init() async throws {
        directory = try TemporaryDirectory(prefix: "hrmd-bus")
        address = "unix:path=\(directory.file("bus"))"
        let result = try await ChildProcess.run(
            "/usr/bin/dbus-daemon",
            ["--config-file=/usr/share/dbus-1/session.conf", "--address=\(address)", "--fork", "--print-pid"],
            in: directory, timeout: .seconds(10))
        guard result.exitCode == 0, let pid = pid_t(result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw StartFailed(description: "dbus-daemon did not start (\(result.termination)): \(result.stderr)")
        }
        self.pid = pid
    }

    /// Kills the daemon now (every client sees the bus go away).
    public func stop() {
        guard pid > 0 else { return }
        kill(pid, SIGKILL)
        pid = 0
    }

    deinit { stop() }
}
