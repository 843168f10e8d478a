@testable import HealthService
@testable import HealthRequests
import Testing

@Suite("Anchor tokens: sample ids and anchors as an application sees them")
struct AnchorTokensTests {
    private let tokens = AnchorTokens(secret: Array(0..<16))

    @Test("SipHash-2-4 gives the reference vector of its paper for an 8-byte message")
    func referenceVector() {
        // Key 00 01 … 0f, message 00 01 … 07: the output bytes 62 24 93 9a 79 f5 f5 93.
        #expect(tokens.siphash(0x0706_0504_0302_0100) == 0x93f5_f579_9a93_2462)
    }

    @Test("a token turns back into its number; 0 stays 0")
    func roundTrip() {
        for plain: Int64 in [0, 1, 2, 41, 1 << 31, 1 << 40, .max, .min, -1, 9_876_543_210] {
            #expect(tokens.plain(tokens.token(plain)) == plain, "\(plain)")
        }
        #expect(tokens.token(0) == 0)
    }

    @Test("consecutive numbers give unrelated tokens, and another secret other tokens")
    func unrelated() {
        let shown = (1...1000).map { tokens.token($0) }
        #expect(Set(shown).count == 1000)
        let steps = zip(shown, shown.dropFirst()).map { $0 > $1 ? $0 - $1 : $1 - $0 }
        #expect(steps.filter { $0 < 1_000_000 }.isEmpty, "no two neighbours are close")
        #expect(shown.filter { $0 < UInt64(1) << 40 }.count < 5, "tokens are spread over 64 bits")
        let other = AnchorTokens(secret: Array(repeating: 9, count: 16))
        #expect((1...1000).filter { other.token(Int64($0)) == shown[$0 - 1] }.isEmpty)
    }
}
