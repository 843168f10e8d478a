@preconcurrency import Glibc
import Foundation

/// A program started for a test or a benchmark, with its output in files. Started with
/// posix_spawn and a clean signal mask, so SIGTERM reaches it even when the parent (an async
/// test runner) blocks signals; every wait is bounded and ends the child with SIGKILL.
public final class ChildProcess: @unchecked Sendable {
    /// How a child ended.
    public enum Termination: Equatable, Sendable, CustomStringConvertible {
        case exited(Int32)
        case signalled(Int32)

        public var description: String {
            switch self {
            case .exited(let code): "exit \(code)"
            case .signalled(let signal): "signal \(signal)"
            }
        }
    }

    public struct TimedOut: Error, CustomStringConvertible {
        public var command: String
        public var description: String { "\(command) did not finish in time and was killed" }
    }

    public let pid: pid_t
    public let command: String
    public let stdoutPath: String
    public let stderrPath: String
    /// Resource usage of the child, known once it was reaped.
    public private(set) var usage: rusage?
    private var termination: Termination?

    /// Starts `executable` with `arguments`; output goes to files in `outputDirectory`, or
    /// standard output to `stdoutPath` when given (such as /dev/null).
    public init(
        _ executable: String, _ arguments: [String], environment: [String: String]? = nil,
        outputDirectory: String, stdinPath: String = "/dev/null", stdoutPath: String? = nil
    ) throws {
        let name = (executable as NSString).lastPathComponent
        let stamp = "\(name)-\(UUID().uuidString.prefix(8))"
        self.stdoutPath = stdoutPath ?? "\(outputDirectory)/\(stamp).out"
        stderrPath = "\(outputDirectory)/\(stamp).err"
        command = ([executable] + arguments).joined(separator: " ")

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, stdinPath, O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, self.stdoutPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, stderrPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        // Nothing else of the test process: a descriptor another test opened without CLOEXEC (a
        // pipe it waits to see closed) must not live on in a child, least of all in a daemon
        // such as a PostgreSQL server that outlives the spawn.
        ChildProcess.closeFrom(3, &actions)

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var emptyMask = sigset_t()
        sigemptyset(&emptyMask)
        posix_spawnattr_setsigmask(&attributes, &emptyMask)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGTERM, SIGINT, SIGHUP, SIGPIPE, SIGCHLD] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let env = (environment ?? ProcessInfo.processInfo.environment).map { "\($0.key)=\($0.value)" }
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = env.map { strdup($0) } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
        guard result == 0 else {
            throw POSIXError(POSIXErrorCode(rawValue: result) ?? .EIO)
        }
        self.pid = pid
    }

    /// Sends a signal, unless the child was reaped: its pid may belong to another process by then.
    public func send(_ signal: Int32) {
        guard termination == nil else { return }
        kill(pid, signal)
    }

    /// Waits for the child to end, at most `timeout` (by default the hang bound: a bound for a
    /// child that does not end, not a speed); past it the child is killed and `TimedOut` thrown.
    @discardableResult
    public func wait(timeout: Duration = HangBound.duration) async throws -> Termination {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        while true {
            if let termination = reap(blocking: false) { return termination }
            if ContinuousClock.now >= deadline {
                kill(pid, SIGKILL)
                _ = reap(blocking: true)
                throw TimedOut(command: command)
            }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    /// Whether the child is still running.
    public var isRunning: Bool { reap(blocking: false) == nil }

    public var standardOutput: String { (try? String(contentsOfFile: stdoutPath, encoding: .utf8)) ?? "" }
    public var standardError: String { (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? "" }

    private func reap(blocking: Bool) -> Termination? {
        if let termination { return termination }
        var status: Int32 = 0
        var resources = rusage()
        let result = wait4(pid, &status, blocking ? 0 : WNOHANG, &resources)
        guard result == pid else { return nil }
        usage = resources
        let low = status & 0x7f
        termination = low == 0 ? .exited((status >> 8) & 0xff) : .signalled(low)
        return termination
    }

    deinit {
        if termination == nil {
            kill(pid, SIGKILL)
            _ = reap(blocking: true)
        }
    }
}

/// The result of running a command to completion.
public struct CommandResult: Sendable {
    public var termination: ChildProcess.Termination
    public var stdout: String
    public var stderr: String

    public var exitCode: Int32? {
        if case .exited(let code) = termination { return code }
        return nil
    }
}

extension ChildProcess {
    /// Runs a command to completion within `timeout` and returns its status and output.
    public static func run(
        _ executable: String, _ arguments: [String], environment: [String: String]? = nil,
        in directory: TemporaryDirectory, timeout: Duration = HangBound.duration
    ) async throws -> CommandResult {
        let child = try ChildProcess(executable, arguments, environment: environment, outputDirectory: directory.path)
        let termination = try await child.wait(timeout: timeout)
        return CommandResult(termination: termination, stdout: child.standardOutput, stderr: child.standardError)
    }
}

extension ChildProcess {
    private typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32

    /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34 and later; Swift's Glibc module
    /// does not declare it), looked up once.
    private static let addCloseFrom: CloseFrom? = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np")
        .map { unsafeBitCast($0, to: CloseFrom.self) }

    /// Has the child close every descriptor from `lowest` on.
    static func closeFrom(_ lowest: Int32, _ actions: inout posix_spawn_file_actions_t) {
        _ = addCloseFrom?(&actions, lowest)
    }
}
