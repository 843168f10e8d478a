import HealthModel
import HealthStore
import Logging

/// Follows the source's share authorization as each write reports it and says so in the log
/// once per change: while a type is not authorized, which command grants it.
struct AuthorizationWatch {
    let source: String
    let logger: Logger
    private(set) var statuses: [SampleType: AuthorizationStatus] = [:]

    init(source: String, logger: Logger) {
        self.source = source
        self.logger = logger
    }

    mutating func observe(_ observed: [SampleType: AuthorizationStatus]) {
        for (type, status) in observed.sorted(by: { $0.key.storageID < $1.key.storageID }) where statuses[type] != status {
            let previous = statuses[type]
            statuses[type] = status
            let metadata: Logger.Metadata = ["type": "\(type.identifier)", "source": "\(source)"]
            let grant = "hrmctl auth grant \(source) \(type.identifier)"
            switch status {
            case .sharingAuthorized:
                logger.notice("authorized to store \(type.identifier)", metadata: metadata)
            case .notDetermined:
                logger.notice("waiting for permission to store \(type.identifier); grant it with: \(grant)", metadata: metadata)
            case .sharingDenied:
                let verb = previous == .sharingAuthorized ? "revoked" : "denied"
                logger.notice("storing \(type.identifier) was \(verb); its samples are dropped until: \(grant)", metadata: metadata)
            }
        }
    }
}
