/// Why a D-Bus operation failed: an error reply from the other side (with its D-Bus error
/// name, such as `org.bluez.Error.Failed`), an errno from sd-bus or libc, or a reply of an
/// unexpected shape.
public enum DBusError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The peer answered with an error (or sd-bus synthesised one, e.g. a timeout).
    case remote(name: String, message: String)
    /// An sd-bus or libc call failed with this errno.
    case system(operation: String, errno: Int32)
    /// The connection is closed; nothing more will be sent or received on it.
    case disconnected
    /// A reply arrived but did not have the expected signature or contents.
    case unexpectedReply(String)
    /// `requestName`: another connection owns this well-known name.
    case nameTaken(String)
    /// A received message was larger than the budget it is decoded within.
    case overBudget(DBusBudgetExceeded)

    /// What a call abandoned by its cancelled task throws.
    static let abandoned = DBusError.remote(name: "org.freedesktop.DBus.Error.NoReply", message: "cancelled")

    /// The D-Bus error name for remote errors, nil otherwise.
    public var name: String? {
        if case .remote(let name, _) = self { return name }
        return nil
    }

    /// Whether this is the error sd-bus (or the peer) gives when a call timed out or the peer went away.
    public var isNoReply: Bool {
        name == "org.freedesktop.DBus.Error.NoReply" || name == "org.freedesktop.DBus.Error.Timeout"
    }

    public var description: String {
        switch self {
        case .remote(let name, let message): message.isEmpty ? name : "\(name): \(message)"
        case .system(let operation, let errno): "\(operation) failed: \(String(cString: strerrorText(errno))) (errno \(errno))"
        case .disconnected: "the D-Bus connection is closed"
        case .unexpectedReply(let what): "unexpected reply: \(what)"
        case .nameTaken(let name): "the D-Bus name \(name) is owned by another connection"
        case .overBudget(let exceeded): exceeded.description
        }
    }
}

#if canImport(Glibc)
import Glibc
private func strerrorText(_ code: Int32) -> UnsafeMutablePointer<CChar> { strerror(code) }
#endif

/// Turns an sd-bus return value (negative errno on failure) into a typed error.
@inline(__always)
func check(_ result: Int32, _ operation: @autoclosure () -> String) throws(DBusError) {
    if result < 0 { throw DBusError.system(operation: operation(), errno: -result) }
}
