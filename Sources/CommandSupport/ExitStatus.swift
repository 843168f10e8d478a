@preconcurrency import Glibc

/// The exit statuses both programs share (sysexits.h, as README documents them).
public enum ExitStatus: Int32, Sendable {
    case success = 0
    case failure = 1
    /// EX_USAGE: bad flags, unknown type or unit.
    case usage = 64
    /// EX_DATAERR: malformed hex, corrupt trace or FIT file.
    case dataError = 65
    /// EX_NOINPUT: an input file or the store is missing.
    case noInput = 66
    /// EX_UNAVAILABLE: a needed service (system bus, store) is unavailable.
    case unavailable = 69
    /// EX_CANTCREAT: the store cannot be created.
    case cannotCreate = 73
    /// EX_NOPERM: permission or authorization denied.
    case permissionDenied = 77
}

/// A failure to report as one line on stderr and an exit status.
public struct CommandFailure: Error, Sendable, CustomStringConvertible {
    public var message: String
    public var status: ExitStatus

    public init(_ message: String, status: ExitStatus) {
        self.message = message
        self.status = status
    }

    public var description: String { message }
}

/// Prints `program: message` on stderr as one line.
public func printError(_ message: String, program: String) {
    let line = "\(program): \(message.replacingNewlines())\n"
    fputs(line, stderr)
}

extension String {
    func replacingNewlines() -> String {
        String(map { $0.isNewline ? " " : $0 })
    }
}
