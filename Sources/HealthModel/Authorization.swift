/// Whether a source may write a type (HKAuthorizationStatus). Absent means `notDetermined`.
public enum AuthorizationStatus: Int, Codable, Sendable, Hashable, CaseIterable, CustomStringConvertible {
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

extension AuthorizationStatus {
    /// The status with this name (`notDetermined`, `sharingDenied`, `sharingAuthorized`), as
    /// `description` writes it.
    public init?(name: String) {
        guard let match = Self.allCases.first(where: { $0.description == name }) else { return nil }
        self = match
    }
}

/// What an authorization is for: writing samples of a type, or reading other sources' samples.
public enum AuthorizationAccess: String, Codable, Sendable, Hashable, CaseIterable {
    case share
    case read
}

/// One request or answer for one kind of access: a source, a type, share or read, and the
/// status. A pending request (asked for, not answered) is `notDetermined`.
public struct AuthorizationAccessEntry: Codable, Sendable, Hashable {
    public var source: String
    public var type: SampleType
    public var access: AuthorizationAccess
    public var status: AuthorizationStatus

    public init(source: String, type: SampleType, access: AuthorizationAccess, status: AuthorizationStatus) {
        self.source = source
        self.type = type
        self.access = access
        self.status = status
    }
}
