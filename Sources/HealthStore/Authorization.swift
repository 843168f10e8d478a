/// Whether a source may write a type (HKAuthorizationStatus). Absent means `notDetermined`.
public enum AuthorizationStatus: Int, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// The source asked (or wrote) and the user has not answered.
    case notDetermined = 0
    /// The user denied or revoked sharing.
    case sharingDenied = 1
    /// The user granted sharing.
    case sharingAuthorized = 2

    public var description: String {
        switch self {
        case .notDetermined: "notDetermined"
        case .sharingDenied: "sharingDenied"
        case .sharingAuthorized: "sharingAuthorized"
        }
    }
}

/// One row of the authorization table: a source, a type, and the user's answer.
public struct AuthorizationEntry: Sendable, Hashable {
    public var source: String
    public var type: SampleType
    public var share: AuthorizationStatus
    public var read: AuthorizationStatus

    public init(source: String, type: SampleType, share: AuthorizationStatus, read: AuthorizationStatus) {
        self.source = source
        self.type = type
        self.share = share
        self.read = read
    }
}
