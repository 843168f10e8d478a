import HRMConfiguration
import Testing

@Suite("The [http] and [max-heart-rate] sections")
struct HTTPConfigurationTests {
    private func parse(_ text: String) throws -> DaemonConfiguration { try DaemonConfiguration(text: text, file: "hrmd.conf") }

    @Test("no section: no HTTP front; a section alone: loopback port 8080")
    func defaults() throws {
        #expect(try parse("[hrmd]\nserve = no\n").http == nil)
        let section = try #require(try parse("[http]\ninsecure = no\n").http)
        #expect(section.address == HTTPAddress(host: "127.0.0.1", port: 8080))
        #expect(section.maxHeartRate == 190 && section.certificate == nil)
    }

    @Test("every key", arguments: [
        ("listen = [::1]:0", "[::1]:0"), ("listen = 0.0.0.0:443", "0.0.0.0:443"), ("listen = localhost:8080", "localhost:8080"),
    ])
    func addresses(line: String, shown: String) throws {
        #expect(try #require(try parse("[http]\n\(line)\n").http).address.description == shown)
    }

    @Test("TLS files, insecure, the web directory, limits and the maximum heart rate from an age")
    func keys() throws {
        let section = try #require(try parse("""
            [http]
            certificate = /etc/hrmd/cert.pem
            key = /etc/hrmd/key.pem
            insecure = yes
            web = /srv/web
            age = 40
            max-connections = 64
            max-live-streams = 32
            [max-heart-rate]
            mock-2 = 175
            """).http)
        #expect(section.certificate == "/etc/hrmd/cert.pem" && section.key == "/etc/hrmd/key.pem" && section.insecure)
        #expect(section.webDirectory == "/srv/web" && section.maxConnections == 64 && section.maxLiveStreams == 32)
        #expect(section.maxHeartRate == 180)
        #expect(try parse("[max-heart-rate]\nmock-2 = 175\n").deviceMaxHeartRates == ["mock-2": 175])
    }

    @Test("a bad value names the file, the line and the key", arguments: [
        "[http]\nlisten = 8080", "[http]\nlisten = host:99999", "[http]\nlisten = a b:80", "[http]\ncertificate = cert.pem",
        "[http]\ninsecure = maybe", "[http]\nage = 300", "[http]\nmax-heart-rate = 90", "[http]\nmax-connections = 0",
        "[http]\nport = 80", "[max-heart-rate]\nmock-1 = fast",
    ])
    func badValues(text: String) throws {
        #expect {
            try parse(text)
        } throws: { error in
            guard let error = error as? ConfigurationError, case .invalidLine(let file, let line, let key, _) = error else { return false }
            return file == "hrmd.conf" && line == 2 && key != nil
        }
    }

    @Test("the flush interval is short while samples are shown live, unless the file says")
    func liveFlush() throws {
        #expect(try parse("[hrmd]\nserve = no\n").flushInterval(live: true) == DaemonConfiguration.liveFlushInterval)
        #expect(try parse("[hrmd]\nserve = no\n").flushInterval(live: false) == DaemonConfiguration.defaultFlushInterval)
        #expect(try parse("[hrmd]\nflush-interval = 0.25\n").flushInterval(live: true) == 0.25)
    }
}
