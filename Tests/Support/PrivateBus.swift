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

    /// Starts a bus with the session bus's configuration. `allowingAllUsers` lets clients of
    /// any uid connect (session.conf admits only the daemon's own uid) and opens the socket's
    /// directory to them: for tests that run a client as another user.
    public init(allowingAllUsers: Bool = false) async throws {
        directory = try TemporaryDirectory(prefix: "hrmd-bus")
        address = "unix:path=\(directory.file("bus"))"
        var configuration = "/usr/share/dbus-1/session.conf"
        if allowingAllUsers {
            configuration = directory.file("bus.conf")
            try Self.allUsersConfiguration.write(toFile: configuration, atomically: true, encoding: .utf8)
            chmod(directory.path, 0o755)
        }
        let result = try await ChildProcess.run(
            "/usr/bin/dbus-daemon",
            ["--config-file=\(configuration)", "--address=\(address)", "--fork", "--print-pid"],
            in: directory)
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

    /// session.conf's policy plus `<allow user="*"/>`.
    private static let allUsersConfiguration = """
        <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
         "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
        <busconfig>
          <type>session</type>
          <listen>unix:tmpdir=/tmp</listen>
          <auth>EXTERNAL</auth>
          <policy context="default">
            <allow user="*"/>
            <allow send_destination="*" eavesdrop="true"/>
            <allow eavesdrop="true"/>
            <allow own="*"/>
          </policy>
        </busconfig>
        """
}
