import HealthModel
import HealthStore
import HealthWire

/// Why a call failed, as the error reply the caller gets: a D-Bus error name and one line.
struct ServiceFailure: Error, Sendable, Hashable, CustomStringConvertible {
    let name: String
    let message: String

    var description: String { "\(name): \(message)" }

    static func invalidArguments(_ message: String) -> ServiceFailure { ServiceFailure(name: HealthBusError.invalidArgs, message: message) }

    static func accessDenied(_ message: String) -> ServiceFailure { ServiceFailure(name: HealthBusError.accessDenied, message: message) }

    /// The store failed: every error of the store that is not about the arguments.
    static func store(_ error: HealthStoreError) -> ServiceFailure {
        switch error {
        case .unknownType, .incompatibleUnit, .invalidInterval:
            return .invalidArguments(error.description)
        case .shareNotAuthorized:
            return ServiceFailure(name: HealthBusError.notAuthorized, message: error.description)
        case .limitReached:
            return ServiceFailure(name: HealthBusError.limitsExceeded, message: error.description)
        default:
            return ServiceFailure(name: HealthBusError.failed, message: error.description)
        }
    }
}

extension WireError {
    var failure: ServiceFailure { .invalidArguments(description) }
}
