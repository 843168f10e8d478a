import CommandSupport
import HTTPFront
import HealthService
import MQTTPublisher

/// Why hrmd stops short: the one line it prints on stderr and the exit status it ends with
/// (hrmd(8)'s EXIT STATUS, docs/interface.md), for every failure its assembly and its
/// services report.
struct DaemonFailure: Error {
    let message: String
    let status: ExitStatus

    /// The failure `error` is: a command's failure with its own status; the HTTP front's or
    /// the MQTT publisher's settings (or a front that cannot listen), a usage error; another
    /// process owning the store service's name, the service unavailable. nil for an error of
    /// no known kind, which the command entry reports as it is (exit 1).
    init?(_ error: any Error) {
        switch error {
        case let failure as CommandFailure: (message, status) = (failure.message, failure.status)
        case let failure as HTTPFrontError: (message, status) = (failure.description, .usage)
        case let failure as MQTTPublisherError: (message, status) = (failure.description, .usage)
        case let failure as HealthServiceError: (message, status) = (failure.description, .unavailable)
        default: return nil
        }
    }
}
