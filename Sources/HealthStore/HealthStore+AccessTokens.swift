internal import Crypto
import Foundation
import GRDB
import HealthModel
import Timestamps

/// Access tokens: `hrmd_<id>_<secret>`, where the id (12 characters of base32) names the
/// token and the secret (32 random bytes, base64url) proves it. The store keeps the SHA-256
/// of the secret, never the secret: a copy of the file does not let anyone act as a source.
/// A plain digest is enough because the secret is random, not a password to guess.
extension HealthStore {
    /// The most tokens one store keeps, revoked ones included (the oldest revoked or expired
    /// ones make room first).
    public static let accessTokenLimit = 1024

    /// Makes a token acting as `source`, expiring `lifetime` seconds from now (nil: never);
    /// `manager` lets it make a manager's requests too.
    public func issueAccessToken(source: String, manager: Bool, lifetime: Int64?) throws(HealthStoreError) -> IssuedAccessToken {
        let now = Timestamp.now()
        return try issueAccessToken(
            source: source, manager: manager, expires: lifetime.map { Timestamp(microsecondsSinceEpoch: now.microsecondsSinceEpoch + $0 * 1_000_000) },
            now: now)
    }

    /// Makes a token acting as `source` that expires at `expires` (nil: never).
    public func issueAccessToken(source: String, manager: Bool, expires: Timestamp?, now: Timestamp)
        throws(HealthStoreError) -> IssuedAccessToken
    {
        var generator = SystemRandomNumberGenerator()
        let id = AccessTokenText.makeID(using: &generator)
        let secret = (0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        let record = AccessTokenRecord(id: id, source: source, manager: manager, created: now, expires: expires, revoked: nil)
        try write { db in
            try db.execute(
                sql: "DELETE FROM accessToken WHERE revoked IS NOT NULL OR (expires IS NOT NULL AND expires <= ?)",
                arguments: [now.microsecondsSinceEpoch])
            let count = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM accessToken") ?? 0
            guard count < Self.accessTokenLimit else {
                throw HealthStoreError.limitReached(
                    "the store has \(count) access tokens, the most it keeps (\(Self.accessTokenLimit)); revoke some with 'hrmctl auth token revoke'")
            }
            try db.execute(
                sql: "INSERT INTO accessToken (id, source, manager, digest, created, expires, revoked) VALUES (?, ?, ?, ?, ?, ?, NULL)",
                arguments: [id, source, manager, Data(SHA256.hash(data: secret)), now.microsecondsSinceEpoch, expires?.microsecondsSinceEpoch])
        }
        return IssuedAccessToken(record: record, token: AccessTokenText.format(id: id, secret: secret))
    }

    /// Every token, oldest first.
    public func accessTokens() throws(HealthStoreError) -> [AccessTokenRecord] {
        try read { db in
            try Row.fetchAll(db, sql: "SELECT id, source, manager, created, expires, revoked FROM accessToken ORDER BY created, id")
                .map(Self.accessTokenRecord)
        }
    }

    /// The record of the token with id `id`, nil when there is none.
    public func accessToken(id: String) throws(HealthStoreError) -> AccessTokenRecord? {
        try read { db in
            try Row.fetchOne(db, sql: "SELECT id, source, manager, created, expires, revoked FROM accessToken WHERE id = ?", arguments: [id])
                .map(Self.accessTokenRecord)
        }
    }

    /// Revokes the token with id `idOrSource`, or every token of the source of that name;
    /// returns how many were revoked now.
    public func revokeAccessTokens(matching idOrSource: String) throws(HealthStoreError) -> Int {
        try revokeAccessTokens(matching: idOrSource, now: .now())
    }

    /// Revokes as of `now`.
    public func revokeAccessTokens(matching idOrSource: String, now: Timestamp) throws(HealthStoreError) -> Int {
        try write { db in
            try db.execute(
                sql: "UPDATE accessToken SET revoked = ? WHERE revoked IS NULL AND (id = ? OR source = ?)",
                arguments: [now.microsecondsSinceEpoch, idOrSource, idOrSource])
            return db.changesCount
        }
    }

    /// What the token `text` is at `now`: usable (and as which source), or why not.
    public func checkAccessToken(_ text: String, now: Timestamp = .now()) throws(HealthStoreError) -> AccessTokenCheck {
        guard let (id, secret) = AccessTokenText.parse(text) else { return .unknown }
        let found: (AccessTokenRecord, Data)? = try read { db in
            guard let row = try Row.fetchOne(
                db, sql: "SELECT id, source, manager, created, expires, revoked, digest FROM accessToken WHERE id = ?", arguments: [id])
            else { return nil }
            return (Self.accessTokenRecord(row), row[6])
        }
        guard let (record, digest) = found, AccessTokenText.equalInConstantTime(Array(SHA256.hash(data: secret)), Array(digest)) else {
            return .unknown
        }
        if record.revoked != nil { return .revoked }
        if let expires = record.expires, now >= expires { return .expired }
        return .valid(record)
    }

    private static func accessTokenRecord(_ row: Row) -> AccessTokenRecord {
        let expires: Int64? = row[4]
        let revoked: Int64? = row[5]
        return AccessTokenRecord(
            id: row[0], source: row[1], manager: row[2], created: Timestamp(microsecondsSinceEpoch: row[3]),
            expires: expires.map(Timestamp.init(microsecondsSinceEpoch:)), revoked: revoked.map(Timestamp.init(microsecondsSinceEpoch:)))
    }
}

/// The text of a token, both ways.
enum AccessTokenText {
    static let prefix = "hrmd_"
    private static let base32: [UInt8] = Array("abcdefghijklmnopqrstuvwxyz234567".utf8)

    static func makeID(using generator: inout some RandomNumberGenerator) -> String {
        String(decoding: (0..<12).map { _ in base32[Int.random(in: 0..<32, using: &generator)] }, as: UTF8.self)
    }

    static func format(id: String, secret: [UInt8]) -> String {
        let encoded = Data(secret).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        return prefix + id + "_" + encoded
    }

    /// The id and secret of `text`, or nil when it is not a token's shape.
    static func parse(_ text: String) -> (id: String, secret: [UInt8])? {
        let bytes = Array(text.utf8)
        guard bytes.count == prefix.utf8.count + 12 + 1 + 43, text.hasPrefix(prefix) else { return nil }
        let id = bytes[5..<17]
        guard id.allSatisfy(base32.contains), bytes[17] == UInt8(ascii: "_") else { return nil }
        var encoded = String(decoding: bytes[18...], as: UTF8.self)
            .replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        encoded += "="
        guard let secret = Data(base64Encoded: encoded), secret.count == 32 else { return nil }
        return (String(decoding: id, as: UTF8.self), Array(secret))
    }

    /// Compares two digests without an early exit, so the time taken says nothing of where
    /// they differ.
    static func equalInConstantTime(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for index in a.indices { difference |= a[index] ^ b[index] }
        return difference == 0
    }
}
