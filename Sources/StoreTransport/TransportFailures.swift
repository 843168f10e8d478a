import CommandSupport
import HealthModel
import HealthRequests

extension HealthStoreError {
    /// The one line and exit status hrmctl reports when a store it reached itself fails: a
    /// missing file, a file it may not read, a damaged one, a central store it cannot reach.
    public var commandFailure: CommandFailure {
        let status: ExitStatus =
            switch self {
            case .unknownType, .incompatibleUnit, .conflict: .usage
            case .missing: .noInput
            case .permissionDenied: .permissionDenied
            case .damaged, .damagedSeries, .foreignWriteAheadLog: .dataError
            case .engine(let failure):
                switch failure.kind {
                case .unreachable: .unavailable
                case .permissionDenied: .permissionDenied
                case .readOnly, .invalidArguments: .usage
                case .limitReached, .failed: .failure
                }
            default: .failure
            }
        return CommandFailure(description, status: status)
    }
}

extension RequestFailure {
    /// The one line and exit status hrmctl reports for a request served in its own process:
    /// the store's own error when the store failed, else by the failure's kind, as the store
    /// service's answer of that kind would be.
    public var commandFailure: CommandFailure {
        if let cause { return cause.commandFailure }
        let status: ExitStatus =
            switch kind {
            case .invalidArguments, .unknownRequest: .usage
            case .accessDenied, .notAuthorized: .permissionDenied
            case .badData: .dataError
            case .limitsExceeded, .failed: .failure
            }
        return CommandFailure(message, status: status)
    }
}
