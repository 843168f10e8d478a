import Foundation
import GRDB
import TestSupport
import Testing
import Timestamps

import HealthModel
@testable import HealthStore

@Suite("Access tokens: a token acts as one source; the store keeps only a digest")
struct AccessTokenTests {
    let now = Timestamp(microsecondsSinceEpoch: 1_795_000_000_000_000)

    @Test("a token issued is valid as its source until revoked or expired, and only with its own secret")
    func lifecycle() throws {
        let store = try Fixture.memoryStore()
        let issued = try store.issueAccessToken(source: "mary/dash", manager: false, expires: now.advanced(bySeconds: 3600), now: now)
        #expect(issued.token.hasPrefix("hrmd_\(issued.record.id)_"))
        #expect(try store.checkAccessToken(issued.token, now: now) == .valid(issued.record))
        #expect(try store.checkAccessToken(issued.token, now: now.advanced(bySeconds: 3600)) == .expired)

        // The same id with another secret, a truncated token, garbage: not tokens of this store.
        var forged = Array(issued.token)
        forged[forged.count - 2] = forged[forged.count - 2] == "A" ? "B" : "A"
        #expect(try store.checkAccessToken(String(forged), now: now) == .unknown)
        #expect(try store.checkAccessToken(String(issued.token.dropLast()), now: now) == .unknown)
        #expect(try store.checkAccessToken("", now: now) == .unknown)
        #expect(try store.checkAccessToken("hrmd_" + String(repeating: "a", count: 100), now: now) == .unknown)

        #expect(try store.revokeAccessTokens(matching: issued.record.id, now: now) == 1)
        #expect(try store.revokeAccessTokens(matching: issued.record.id, now: now) == 0)
        #expect(try store.checkAccessToken(issued.token, now: now) == .revoked)
        #expect(try store.accessTokens().map(\.revoked) == [now])
    }

    @Test("revoking a source revokes each of its tokens and no other")
    func revokeBySource() throws {
        let store = try Fixture.memoryStore()
        let first = try store.issueAccessToken(source: "mary/dash", manager: false, expires: nil, now: now)
        let second = try store.issueAccessToken(source: "mary/dash", manager: true, expires: nil, now: now)
        let other = try store.issueAccessToken(source: "john/obs", manager: false, expires: nil, now: now)
        #expect(try store.revokeAccessTokens(matching: "mary/dash", now: now) == 2)
        #expect(try store.checkAccessToken(first.token, now: now) == .revoked)
        #expect(try store.checkAccessToken(second.token, now: now) == .revoked)
        #expect(try store.checkAccessToken(other.token, now: now) == .valid(other.record))
        #expect(try store.accessToken(id: second.record.id)?.manager == true)
    }

    @Test("the store file holds the digest of a token's secret, never the token")
    func onlyDigestStored() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("tokens.sqlite")
        let store = try HealthStore.open(path: path, mode: .createIfMissing)
        let issued = try store.issueAccessToken(source: "mary/dash", manager: false, expires: nil, now: now)
        let secretPart = String(issued.token.split(separator: "_").last!)
        let queue = try DatabaseQueue(path: path)
        let digests = try queue.read { db in try Data.fetchAll(db, sql: "SELECT digest FROM accessToken") }
        #expect(digests.count == 1 && digests[0].count == 32)
        let everything = try queue.read { db in
            try String.fetchAll(db, sql: "SELECT quote(digest) || id || source FROM accessToken").joined()
        }
        #expect(!everything.contains(secretPart))
        #expect(!everything.contains(issued.token))
    }

    @Test("the store keeps at most its limit of tokens; revoked and expired ones make room first")
    func limit() throws {
        let store = try Fixture.memoryStore()
        var first: IssuedAccessToken?
        for index in 0..<HealthStore.accessTokenLimit {
            let issued = try store.issueAccessToken(source: "mary/app\(index % 7)", manager: false, expires: nil, now: now)
            if index == 0 { first = issued }
        }
        #expect(throws: HealthStoreError.self) { try store.issueAccessToken(source: "mary/more", manager: false, expires: nil, now: now) }
        _ = try store.revokeAccessTokens(matching: first!.record.id, now: now)
        _ = try store.issueAccessToken(source: "mary/more", manager: false, expires: nil, now: now)
        #expect(try store.accessTokens().count == HealthStore.accessTokenLimit)
    }
}
