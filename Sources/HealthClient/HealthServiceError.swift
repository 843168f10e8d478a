import HealthRequests
import HealthModel
import HealthWire
import SDBus

/// Why a call to the store service failed, with the service's (or the bus's) one-line message.
public enum HealthServiceError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Nobody answers: no system bus, or no owner of `org.hrmd.Health` (and none activatable).
    case notRunning(String)
    /// A manager's method called by someone who is not one (`AccessDenied`).
    case accessDenied(String)
    /// Bad arguments: unknown type, incompatible unit, bad app name, impossible range (`InvalidArgs`).
    case invalidArguments(String)
    /// A save of a type the caller's source may not share (`org.hrmd.Health1.Error.NotAuthorized`).
    case notAuthorized(String)
    /// An import that is not a readable recording (`org.hrmd.Health1.Error.BadData`).
    case badData(String)
    /// The store failed (`org.hrmd.Health1.Error.Failed`).
    case failed(String)
    /// Too many calls in flight or observers (`LimitsExceeded`).
    case limitsExceeded(String)
    /// No reply in time, or the service went away before answering.
    case timedOut(String)
    /// Any other error: another D-Bus error name, a reply of the wrong shape, a local failure.
    case other(String)

    /// The error a D-Bus failure of `member` means.
    public init(_ error: DBusError, member: String) {
        switch error {
        case .remote(let name, let message):
            let text = message.isEmpty ? name : message
            switch name {
            case HealthBusError.serviceUnknown, HealthBusError.nameHasNoOwner: self = .notRunning(text)
            case HealthBusError.accessDenied: self = .accessDenied(text)
            case HealthBusError.invalidArgs: self = .invalidArguments(text)
            case HealthBusError.notAuthorized: self = .notAuthorized(text)
            case HealthBusError.badData: self = .badData(text)
            case HealthBusError.failed: self = .failed(text)
            case HealthBusError.limitsExceeded: self = .limitsExceeded(text)
            case "org.freedesktop.DBus.Error.NoReply", "org.freedesktop.DBus.Error.Timeout", "org.freedesktop.DBus.Error.TimedOut":
                self = .timedOut("\(member): no reply from \(HealthBus.name) (\(text))")
            case "org.freedesktop.DBus.Error.Disconnected":
                self = .notRunning(text)
            default: self = .other("\(member): \(error)")
            }
        case .system(let operation, _) where operation.hasPrefix("sd_bus_open") || operation.hasPrefix("sd_bus_start"):
            self = .notRunning("\(error)")
        case .disconnected:
            self = .notRunning("the system bus connection is closed")
        default:
            self = .other("\(member): \(error)")
        }
    }

    /// The one-line message.
    public var message: String {
        switch self {
        case .notRunning(let text), .accessDenied(let text), .invalidArguments(let text), .notAuthorized(let text),
            .badData(let text), .failed(let text), .limitsExceeded(let text), .timedOut(let text), .other(let text):
            text
        }
    }

    public var description: String { message }
}

extension WireError {
    /// A reply the client cannot read.
    func serviceError(_ member: String) -> HealthServiceError { .other("\(member): unexpected reply: \(description)") }
}
