import Timestamps

/// A bearer token that lets a client of the HTTP front act as one source, with that source's
/// authorization (HealthKit's app identity, for a program that is not on the bus). The
/// store keeps only a digest of its secret; this record is what may be listed.
public struct AccessTokenRecord: Codable, Sendable, Hashable {
    /// The token's public part: names it in lists and revocations, never enough to use it.
    public var id: String
    /// The source the token acts as (`USER/APP`).
    public var source: String
    /// Whether the token may also make a manager's requests (list pending authorization
    /// requests, answer them).
    public var manager: Bool
    public var created: Timestamp
    /// nil: never expires.
    public var expires: Timestamp?
    /// When it was revoked; nil while it is not.
    public var revoked: Timestamp?

    public init(id: String, source: String, manager: Bool, created: Timestamp, expires: Timestamp?, revoked: Timestamp?) {
        self.id = id
        self.source = source
        self.manager = manager
        self.created = created
        self.expires = expires
        self.revoked = revoked
    }

    /// Whether the token is usable at `now`.
    public func isValid(at now: Timestamp) -> Bool {
        revoked == nil && (expires.map { now < $0 } ?? true)
    }
}

/// A token just made: its record and its text, which is shown once and never stored.
public struct IssuedAccessToken: Codable, Sendable, Hashable {
    public var record: AccessTokenRecord
    /// `hrmd_<id>_<secret>`.
    public var token: String

    public init(record: AccessTokenRecord, token: String) {
        self.record = record
        self.token = token
    }
}

/// What a presented token turned out to be.
public enum AccessTokenCheck: Sendable, Hashable {
    /// Usable: acts as the record's source.
    case valid(AccessTokenRecord)
    /// Not a token of this store (malformed, unknown id, or a wrong secret).
    case unknown
    case expired
    case revoked

    /// One line for the client.
    public var refusal: String? {
        switch self {
        case .valid: nil
        case .unknown: "the token is not valid"
        case .expired: "the token has expired"
        case .revoked: "the token was revoked"
        }
    }
}
