import HRMConfiguration
import Testing

@Suite("The [sync] section")
struct SyncConfigurationTests {
    @Test("a full section parses; defaults with only a url; off without the section")
    func parses() throws {
        let text = """
            [sync]
            url = postgresql://gw_room1@db.lan/hrmd?sslmode=verify-full
            gateway = room1
            batch = 500
            timeout = 3
            retry-max = 10
            """
        let section = try #require(try DaemonConfiguration(text: text, file: "hrmd.conf").sync)
        #expect(section.url?.revealed == "postgresql://gw_room1@db.lan/hrmd?sslmode=verify-full")
        #expect("\(section)".contains("db.lan") == false, "the configuration prints the url")
        #expect(section.gateway == "room1")
        #expect(section.batchSize == 500)
        #expect(section.timeoutSeconds == 3)
        #expect(section.retryMaximumSeconds == 10)
        let plain = try #require(try DaemonConfiguration(text: "[sync]\nurl = service=hrmd\n", file: "f").sync)
        #expect(plain.url?.revealed == "service=hrmd")
        #expect(plain.gateway == nil && plain.batchSize == 20000 && plain.timeoutSeconds == 15 && plain.retryMaximumSeconds == 60)
        #expect(try DaemonConfiguration(text: "[hrmd]\nsensor = mock\n", file: "f").sync == nil)
    }

    @Test("bad values are errors naming the line and key", arguments: [
        ("[sync]\ngateway = room1\n", 2, "url"),
        ("[sync]\nurl = mysql://db\n", 2, "url"),
        ("[sync]\nurl = service=hrmd\ngateway = Room 1\n", 3, "gateway"),
        ("[sync]\nurl = service=hrmd\nbatch = 0\n", 3, "batch"),
        ("[sync]\nurl = service=hrmd\ntimeout = 0.5\n", 3, "timeout"),
        ("[sync]\nurl = service=hrmd\nretry-max = forever\n", 3, "retry-max"),
        ("[sync]\nurl = service=hrmd\nhost = db\n", 3, "host"),
    ])
    func refuses(text: String, line: Int, key: String) throws {
        #expect {
            _ = try DaemonConfiguration(text: text, file: "hrmd.conf")
        } throws: { error in
            guard case ConfigurationError.invalidLine(file: "hrmd.conf", line: line, key: key, let message) = error else { return false }
            return !message.contains("secret")
        }
    }
}
