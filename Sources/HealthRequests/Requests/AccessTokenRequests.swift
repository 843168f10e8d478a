import HealthModel

/// A manager makes a bearer token for the HTTP front that acts as `source`, with that
/// source's authorization (`manager`: also a manager's requests). The token's text is in the
/// answer once; the store keeps only its digest.
public struct CreateAccessToken: HealthRequest {
    public static let name = "CreateAccessToken"
    public static let access = RequestAccess.manager
    public static let memory: RequestMemory = .constant
    /// The longest a token may live: ten years.
    public static let longestLifetime: Int64 = 10 * 366 * 86_400

    public var source: String
    public var manager: Bool
    /// Seconds from now until it expires; 0: never.
    public var expiresIn: Int64

    public init(source: String, manager: Bool, expiresIn seconds: Int64?) {
        self.source = source
        self.manager = manager
        self.expiresIn = seconds ?? 0
    }

    public struct Response: Codable, Sendable {
        public var id: String
        public var token: String
        /// Microseconds since the epoch; 0: never.
        public var expires: Int64

        public init(id: String, token: String, expires: Int64) {
            self.id = id
            self.token = token
            self.expires = expires
        }
    }

    public func serve(in context: some RequestContext) async throws(RequestFailure) -> Response {
        guard source != HealthSource.daemonName, SourceNames.isValid(source) else {
            throw .invalidArguments(
                "bad source \(source.quoted) for a token: it is USER/APP with APP matching [a-z0-9][a-z0-9._-]{0,63}")
        }
        guard (0...Self.longestLifetime).contains(expiresIn), expiresIn == 0 || expiresIn >= 60 else {
            throw .invalidArguments("a token expires in 60 s to 10 years, or never (0), not \(expiresIn) s")
        }
        let lifetime = expiresIn == 0 ? nil : expiresIn
        let issued = try await context.onStore { [source, manager] store throws(HealthStoreError) in
            try store.issueAccessToken(source: source, manager: manager, lifetime: lifetime)
        }
        context.log(.notice, "made an access token\(manager ? " (manager)" : "")", ["source": source, "token_id": issued.record.id])
        return Response(id: issued.record.id, token: issued.token, expires: issued.record.expires?.microsecondsSinceEpoch ?? 0)
    }
}

/// A manager lists every access token (never their secrets).
public struct AccessTokens: HealthRequest {
    public static let name = "AccessTokens"
    public static let access = RequestAccess.manager
    public static let memory: RequestMemory = .perStored("access token")

    public init() {}

    public struct Response: Codable, Sendable {
        public var tokens: [AccessTokenRecord]

        public init(tokens: [AccessTokenRecord]) { self.tokens = tokens }
    }

    public func serve(in context: some RequestContext) async throws(RequestFailure) -> Response {
        Response(tokens: try await context.onStore { store throws(HealthStoreError) in try store.accessTokens() })
    }
}

/// A manager revokes the token with an id, or every token of a source: from the next
/// request (and within a second on a live stream) it is refused.
public struct RevokeAccessTokens: HealthRequest {
    public static let name = "RevokeAccessTokens"
    public static let access = RequestAccess.manager
    public static let memory: RequestMemory = .perStored("access token")

    /// A token's id or a source.
    public var token: String

    public init(idOrSource: String) { token = idOrSource }

    public struct Response: Codable, Sendable {
        public var revoked: UInt32

        public init(revoked: UInt32) { self.revoked = revoked }
    }

    public func serve(in context: some RequestContext) async throws(RequestFailure) -> Response {
        guard !token.isEmpty, token.utf8.count <= RequestBudgets.stringArgumentBytes else {
            throw .invalidArguments("name a token's id or a source to revoke")
        }
        let revoked = try await context.onStore { [token] store throws(HealthStoreError) in try store.revokeAccessTokens(matching: token) }
        context.log(.notice, "revoked \(revoked) access token(s)", ["matching": token])
        return Response(revoked: UInt32(clamping: revoked))
    }
}
