import Foundation
import HealthModel

/// The bucket names of Statistics and `hrmctl stats --by`.
public enum StatisticsBucketName: String, Sendable, CaseIterable {
    case minute = "1m", fiveMinutes = "5m", hour = "1h", day = "1d"

    /// The store's bucket; days are calendar days in `timeZone`.
    public func bucket(timeZone: TimeZone) -> StatisticsBucket {
        switch self {
        case .minute: .seconds(60)
        case .fiveMinutes: .seconds(300)
        case .hour: .seconds(3600)
        case .day: .days(timeZone)
        }
    }

    /// The bucket a call names, or a one-line reason.
    public static func parse(_ name: String) throws(WireError) -> StatisticsBucketName {
        guard let bucket = StatisticsBucketName(rawValue: name) else {
            throw WireError("unknown bucket \(name.quoted) (known: \(allCases.map(\.rawValue).joined(separator: ", ")))")
        }
        return bucket
    }
}

extension AuthorizationStatus {
    /// The status a call names (`notDetermined`, `sharingDenied`, `sharingAuthorized`).
    public static func parse(_ name: String) throws(WireError) -> AuthorizationStatus {
        guard let status = AuthorizationStatus(name: name) else {
            throw WireError("unknown status \(name.quoted) (known: \(allCases.map(\.description).joined(separator: ", ")))")
        }
        return status
    }
}

extension AuthorizationAccess {
    /// The access a call names (`share` or `read`).
    public static func parse(_ name: String) throws(WireError) -> AuthorizationAccess {
        guard let access = AuthorizationAccess(rawValue: name) else { throw WireError("unknown access \(name.quoted) (known: share, read)") }
        return access
    }
}

