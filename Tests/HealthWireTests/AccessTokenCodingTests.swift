import HealthModel
import HealthRequests
import HealthWire
import SDBus
import Testing
import Timestamps

@Suite("Access tokens and sample pages on the wire")
struct AccessTokenCodingTests {
    @Test("a token's record survives its structure, with and without expiry and revocation")
    func tokenRecordRoundTrips() throws {
        let created = Timestamp(microsecondsSinceEpoch: 1_795_000_000_000_000)
        let records = [
            AccessTokenRecord(id: "abcdefghijkl", source: "mary/dash", manager: false, created: created, expires: nil, revoked: nil),
            AccessTokenRecord(
                id: "mnopqrstuvwx", source: "root/tv", manager: true, created: created, expires: created.advanced(bySeconds: 60),
                revoked: created.advanced(bySeconds: 1)),
        ]
        for record in records {
            #expect(record.wireValue.signature == AccessTokenRecord.wireSignature)
            #expect(try AccessTokenRecord.fromWire(record.wireValue, index: nil) == record)
        }
        #expect(throws: WireError.self) { try AccessTokenRecord.fromWire(.string("no"), index: nil) }
    }

    @Test("the answers of the token requests and of SamplePage travel as their methods say")
    func answersRoundTrip() throws {
        let created = Timestamp(microsecondsSinceEpoch: 1_795_000_000_000_000)
        let tokens = AccessTokens.Response(tokens: [
            AccessTokenRecord(id: "abcdefghijkl", source: "mary/dash", manager: false, created: created, expires: nil, revoked: nil)
        ])
        let layout = try #require(HealthInterface.layouts[AccessTokens.name])
        let encoded = try RequestCoding.encode(tokens, as: layout.outputs)
        #expect(try RequestCoding.decode(AccessTokens.Response.self, from: encoded, as: layout.outputs).tokens == tokens.tokens)

        let pageLayout = try #require(HealthInterface.layouts[SamplePage.name])
        let page = SamplePage.Response(samples: [], next: "1795000000000000.2")
        let pageWire = try RequestCoding.encode(page, as: pageLayout.outputs)
        #expect(try RequestCoding.decode(SamplePage.Response.self, from: pageWire, as: pageLayout.outputs).next == page.next)
    }
}
