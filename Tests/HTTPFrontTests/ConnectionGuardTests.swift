import Testing

@testable import HTTPFront

@Suite("The first head's end, loopback names and origins")
struct ConnectionGuardTests {
    private func ends(_ chunks: [String]) -> Bool {
        var scanner = HeadEndScanner()
        return chunks.contains { scanner.feed(Array($0.utf8)) }
    }

    @Test("blank lines before a request line end nothing; the empty line after it does, however split")
    func headEnd() {
        #expect(!ends(["\r\n\r\n", "\r\n", "\n\n\n"]))
        #expect(!ends(["\r\n\r\nGET / HTTP/1.1\r\nHost: x\r\n"]))
        #expect(ends(["\r\n\r\nGET / HTTP/1.1\r\nHost: x\r\n\r\n"]))
        #expect(ends(["GET / HTTP/1.1\r", "\n", "\r", "\n"]))
        #expect(ends(["GET / HTTP/1.1\n\n"]))
        #expect(!ends(["GET / HTTP/1.1\r\nHost: x\r\n \r\n"]), "a line holding a space is not empty")
    }

    @Test("loopback is decided by parsing the address")
    func loopback() {
        for host in ["127.0.0.1", "127.8.9.10", "::1", "[::1]", "localhost", "LOCALHOST", "0:0:0:0:0:0:0:1"] {
            #expect(LoopbackAddress.isLoopback(host), "\(host)")
        }
        for host in ["127.example.com", "127.0.0.1.nip.io", "128.0.0.1", "0.0.0.0", "::", "::2", "[::ffff:127.0.0.1]x", "evil", ""] {
            #expect(!LoopbackAddress.isLoopback(host), "\(host)")
        }
    }

    @Test("a loopback server answers loopback Host names only, and same-origin Origins only")
    func origins() {
        let check = OriginCheck(loopbackOnly: true, secure: false)
        #expect(check.refusal(host: "127.0.0.1:8080", origin: nil) == nil)
        #expect(check.refusal(host: "localhost:8080", origin: "http://localhost:8080") == nil)
        #expect(check.refusal(host: "[::1]:8080", origin: "http://[::1]:8080") == nil)
        #expect(check.refusal(host: "localhost", origin: "http://LOCALHOST:80") == nil)
        #expect(check.refusal(host: nil, origin: nil) == nil)
        #expect(check.refusal(host: "rebound.example:8080", origin: nil) != nil)
        #expect(check.refusal(host: "127.0.0.1:8080", origin: "http://evil.example") != nil)
        #expect(check.refusal(host: "127.0.0.1:8080", origin: "http://127.0.0.1:8081") != nil)
        #expect(check.refusal(host: "127.0.0.1:8080", origin: "null") != nil)
        #expect(check.refusal(host: "127.0.0.1:8080", origin: "https://127.0.0.1:8080") != nil, "another scheme is another origin")
        let network = OriginCheck(loopbackOnly: false, secure: true)
        #expect(network.refusal(host: "hr.example:8443", origin: "http://hr.example:8443") != nil, "plain HTTP is not this TLS server's origin")
        #expect(network.refusal(host: "hr.example:8443", origin: "https://hr.example:8443") == nil)
        #expect(network.refusal(host: "hr.example", origin: "https://hr.example") == nil, "a Host without a port has the origin's default")
        #expect(network.refusal(host: "hr.example:8443", origin: "https://evil.example:8443") != nil)
        #expect(network.refusal(host: "anything.example", origin: nil) == nil, "a network server does not know its names")
    }
}
