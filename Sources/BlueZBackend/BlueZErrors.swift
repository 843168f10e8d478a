import SDBus

/// What a failed BlueZ call means for hrmd, with a reason a person can act on.
public enum BlueZFailure: Error, Sendable, Hashable {
    /// The link attempt failed (out of range, the strap asleep or busy): retry with backoff.
    case connectionFailed(String)
    /// Another connection attempt to this device is under way: wait and look again.
    case inProgress
    /// hrmd may not do this (D-Bus policy, or a notify session held by another program).
    case notPermitted(String)
    /// The object is gone (device removed, bluetoothd restarted).
    case gone
    /// The adapter is powered off or not ready.
    case adapterNotReady
    /// bluetoothd did not answer in time.
    case noReply
    /// The system bus connection closed.
    case busClosed
    /// Anything else, as bluetoothd said it.
    case other(String)

    public init(_ error: DBusError) {
        guard case .remote(let name, let message) = error else {
            self = error == .disconnected ? .busClosed : .other(error.description)
            return
        }
        switch name {
        case "org.bluez.Error.Failed" where message == Self.alreadyInProgress:
            self = .inProgress
        case "org.bluez.Error.Failed", "org.bluez.Error.ConnectionAttemptFailed", "org.bluez.Error.AbortedByRemote":
            self = .connectionFailed(Self.explain(message))
        case "org.bluez.Error.InProgress", "org.bluez.Error.AlreadyConnected", "org.bluez.Error.AlreadyExists":
            self = .inProgress
        case "org.bluez.Error.NotPermitted", "org.bluez.Error.NotAuthorized", "org.freedesktop.DBus.Error.AccessDenied":
            self = .notPermitted(message.isEmpty ? name : message)
        case "org.freedesktop.DBus.Error.UnknownObject", "org.freedesktop.DBus.Error.UnknownMethod",
            "org.bluez.Error.DoesNotExist", "org.freedesktop.DBus.Error.ServiceUnknown", "org.freedesktop.DBus.Error.NameHasNoOwner":
            self = .gone
        case "org.bluez.Error.NotReady":
            self = .adapterNotReady
        case "org.freedesktop.DBus.Error.NoReply", "org.freedesktop.DBus.Error.Timeout", "org.freedesktop.DBus.Error.TimedOut":
            self = .noReply
        default:
            self = .other(message.isEmpty ? name : "\(name): \(message)")
        }
    }

    /// A short reason for logs and `hrmctl devices`.
    public var reason: String {
        switch self {
        case .connectionFailed(let detail): "connection failed: \(detail)"
        case .inProgress: "a connection attempt is already in progress"
        case .notPermitted(let detail): "not permitted: \(detail) (another program may hold the strap's notifications)"
        case .gone: "the device disappeared from bluetoothd"
        case .adapterNotReady: "the adapter is not ready (powered off?)"
        case .noReply: "bluetoothd did not answer in time"
        case .busClosed: "the system bus connection closed"
        case .other(let detail): detail
        }
    }

    /// What bluetoothd's `Connect` answers, as `org.bluez.Error.Failed` (strerror(EALREADY)), while
    /// its own LE connection attempt to the device is still under way: under load, one started
    /// by an earlier `Connect` whose answer hrmd stopped waiting for.
    static let alreadyInProgress = "Operation already in progress"

    /// bluetoothd's terse reasons, said plainly.
    public static func explain(_ message: String) -> String {
        switch message {
        case "le-connection-abort-by-local": "the link was aborted by this adapter (strap out of range, asleep or connected elsewhere)"
        case "le-connection-abort-by-remote": "the strap closed the link"
        case "Software caused connection abort": "the link was aborted (strap out of range?)"
        case "": "unknown reason"
        default: message
        }
    }
}
