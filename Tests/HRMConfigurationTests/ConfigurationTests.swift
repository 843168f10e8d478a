import CommandSupport
import HRMConfiguration
import SensorFrames
import Testing
import Timestamps

@Suite("Sensor specifications")
struct SensorSpecTests {
    @Test("every documented sensor kind parses")
    func kinds() throws {
        #expect(try SensorSpec(parsing: "ble") == .ble(address: nil))
        #expect(try SensorSpec(parsing: "ble:aa:bb:cc:dd:ee:ff") == .ble(address: "AA:BB:CC:DD:EE:FF"))
        #expect(try SensorSpec(parsing: "hci") == .hci(adapter: nil))
        #expect(try SensorSpec(parsing: "hci:hci1") == .hci(adapter: 1))
        #expect(try SensorSpec(parsing: "ant") == .ant(tty: nil))
        #expect(try SensorSpec(parsing: "ant:/dev/ttyUSB0") == .ant(tty: "/dev/ttyUSB0"))
        #expect(try SensorSpec(parsing: "serial:/dev/ttyACM0,baud=9600") == .serial(path: "/dev/ttyACM0", baud: 9600))
        #expect(try SensorSpec(parsing: "serial") == .serial(path: nil, baud: nil))
        #expect(try SensorSpec(parsing: "replay:/tmp/a.jsonl") == .replay(path: "/tmp/a.jsonl"))
        #expect(try SensorSpec(parsing: "replay:/tmp/btsnoop_hci.log,handle=0x000E") == .replay(path: "/tmp/btsnoop_hci.log", measurementHandle: 14))
        #expect(try SensorSpec(parsing: "replay:/tmp/a,b.log,handle=14") == .replay(path: "/tmp/a,b.log", measurementHandle: 14))
        #expect(try SensorSpec(parsing: "replay:/tmp/a,b.log") == .replay(path: "/tmp/a,b.log"), "a comma alone belongs to the name")
    }

    @Test("a replay's measurement handle prints back as 0xNNNN")
    func replayHandleRoundTrip() throws {
        #expect(try SensorSpec(parsing: "replay:/tmp/c.btsnoop,handle=14").description == "replay:/tmp/c.btsnoop,handle=0x000e")
        #expect(try SensorSpec(parsing: "replay:/tmp/c.btsnoop").description == "replay:/tmp/c.btsnoop")
        #expect(ATTHandleText.parse("0xFFFF") == 0xFFFF && ATTHandleText.parse("0x0") == nil && ATTHandleText.parse("65536") == nil)
    }

    @Test("mock keys parse into typed options")
    func mockKeys() throws {
        guard case .mock(let options) = try SensorSpec(parsing: "mock:bpm=55,hz=4,rr=off,location=wrist,seed=9,id=left,contact-loss=0") else {
            Issue.record("not a mock")
            return
        }
        #expect(options.bpm == 55 && options.hz == 4 && !options.rr && options.location == .wrist)
        #expect(options.seed == 9 && options.id == "left" && options.contactLoss == 0)
        guard case .mock(let defaults) = try SensorSpec(parsing: "mock") else { return }
        #expect(defaults.location == .chest && defaults.hz == 1 && defaults.rr)
    }

    @Test("the mock's ecg and acc keys are off unless turned on, and print back only when on")
    func mockPMDKeys() throws {
        guard case .mock(let options) = try SensorSpec(parsing: "mock:hz=4,ecg=on,acc=yes") else {
            Issue.record("not a mock")
            return
        }
        #expect(options.ecg && options.acc)
        #expect(try SensorSpec(parsing: "mock:hz=4,ecg=on,acc=yes").description == "mock:bpm=62,hz=4,rr=on,location=chest,ecg=on,acc=on")
        guard case .mock(let defaults) = try SensorSpec(parsing: "mock:ecg=off") else { return }
        #expect(!defaults.ecg && !defaults.acc)
        #expect(try SensorSpec(parsing: "mock").description == "mock:bpm=62,hz=1,rr=on,location=chest")
        #expect(throws: ConfigurationError.self) { try SensorSpec(parsing: "mock:ecg=maybe") }
        #expect(throws: ConfigurationError.self) { try SensorSpec(parsing: "mock:acc") }
    }

    @Test("udev-found sensors and adapters print back as they parse", arguments: [
        "ant", "serial", "serial:/dev/ttyACM0,baud=9600", "ant:/dev/ttyUSB0", "hci", "hci:hci0", "hci:hci12",
    ])
    func hotplugSpecsRoundTrip(spec: String) throws {
        #expect(try SensorSpec(parsing: spec).description == spec)
    }

    @Test("bad specifications are typed errors", arguments: [
        "bogus", "ble:nothex", "mock:bpm=5", "mock:hz=0", "mock:color=red", "mock:bpm", "mock:location=knee",
        "serial:", "serial:/dev/ttyACM0,parity=odd", "replay:", "ant:ttyUSB0", "replay:/tmp/c.btsnoop,handle=0",
        "replay:/tmp/c.btsnoop,handle=zz", "replay:,handle=0x000e",
        "hci:", "hci:hci", "hci:0", "hci:hcix", "hci:hci-1", "hci:hci99999", "hci:AA:BB:CC:DD:EE:FF", "hci:hci٣",
    ])
    func badSpecs(spec: String) {
        #expect(throws: ConfigurationError.self) { try SensorSpec(parsing: spec) }
    }
}

@Suite("Configuration file")
struct DaemonConfigurationTests {
    @Test("a full file parses")
    func fullFile() throws {
        let text = """
            # hrmd configuration
            [hrmd]
            store = /var/lib/hrmd/hrmd.sqlite
            sensor = mock:bpm=70
            sensor = ble:AA:BB:CC:DD:EE:FF
            any-strap = no
            serve = yes
            flush-interval = 0.25
            log-level = debug

            ; per-device locations
            [locations]
            aa:bb:cc:dd:ee:ff = chest
            mock-2 = wrist
            """
        let configuration = try DaemonConfiguration(text: text, file: "hrmd.conf")
        #expect(configuration.storePath == "/var/lib/hrmd/hrmd.sqlite")
        #expect(configuration.sensors.count == 2)
        #expect(configuration.flushInterval(live: false) == 0.25)
        #expect(configuration.serve)
        #expect(DaemonConfiguration().serve == false)
        #expect(configuration.logLevel == .debug)
        #expect(configuration.locations == ["AA:BB:CC:DD:EE:FF": .chest, "mock-2": .wrist])
    }

    @Test("an unknown key names the file, the line and the key")
    func unknownKey() {
        let text = "[hrmd]\nsensor = mock\ncolour = blue\n"
        #expect(throws: ConfigurationError.invalidLine(
            file: "/etc/hrmd/hrmd.conf", line: 3, key: "colour",
            message: "unknown key (known: store, sensor, any-strap, serve, flush-interval, log-level)")) {
            try DaemonConfiguration(text: text, file: "/etc/hrmd/hrmd.conf")
        }
    }

    @Test("bad values and structure are errors at their line", arguments: [
        ("[hrmd]\nany-strap = maybe", 2, "any-strap"),
        ("[hrmd]\n\nflush-interval = fast", 3, "flush-interval"),
        ("[hrmd]\nsensor = mock:bpm=1000", 2, "sensor"),
        ("[hrmd]\nstore = relative.sqlite", 2, "store"),
        ("[locations]\nmock-1 = knee", 2, "mock-1"),
        ("[nowhere]\nx = 1", 2, "x"),
        ("store = /x", 1, "store"),
    ] as [(String, Int, String)])
    func badValues(text: String, line: Int, key: String) {
        do {
            _ = try DaemonConfiguration(text: text, file: "f.conf")
            Issue.record("accepted: \(text)")
        } catch {
            guard case .invalidLine(let file, let errorLine, let errorKey, _) = error else {
                Issue.record("wrong error \(error)")
                return
            }
            #expect(file == "f.conf" && errorLine == line && errorKey == key)
            #expect(error.description.hasPrefix("f.conf:\(line): key '\(key)'"))
        }
    }

    @Test("[http] turns the front on, with its limits; idle-timeout is 1…600 seconds")
    func httpSection() throws {
        let text = "[http]\nlisten = 0.0.0.0:8443\nmax-connections = 8\nidle-timeout = 2\n"
        let http = try #require(try DaemonConfiguration(text: text, file: "f").http)
        #expect(http.address == HTTPAddress(host: "0.0.0.0", port: 8443))
        #expect(http.maxConnections == 8 && http.idleTimeoutSeconds == 2)
        #expect(HTTPConfiguration().idleTimeoutSeconds == 30)
        #expect(DaemonConfiguration().http == nil)
        for bad in ["0", "601", "ten", "1.5"] {
            #expect(throws: ConfigurationError.self) { try DaemonConfiguration(text: "[http]\nidle-timeout = \(bad)\n", file: "f") }
        }
    }

    @Test("a line that is neither a section nor a key is an error")
    func garbageLine() {
        #expect(throws: ConfigurationError.invalidLine(file: "f", line: 2, key: nil, message: "expected 'key = value' or [section]")) {
            try DaemonConfiguration(text: "[hrmd]\njust words\n", file: "f")
        }
    }
}

@Suite("Store location and time expressions")
struct CLISupportTests {
    @Test("--store wins over HRMD_STORE, which wins over the configuration and the default")
    func storePrecedence() {
        #expect(StoreLocation(flag: "/a", configured: "/c", environment: ["HRMD_STORE": "/b"]) == StoreLocation(path: "/a", isExplicit: true))
        #expect(StoreLocation(flag: nil, configured: "/c", environment: ["HRMD_STORE": "/b"]).path == "/b")
        #expect(StoreLocation(flag: nil, configured: "/c", environment: [:]).path == "/c")
        #expect(StoreLocation(flag: nil, environment: [:]) == StoreLocation(path: StoreLocation.systemPath, isExplicit: false))
    }

    @Test("WHEN accepts RFC 3339 and ages")
    func timeExpressions() {
        let now = Timestamp(microsecondsSinceEpoch: 1_795_000_000_000_000)
        #expect(TimeExpression.parse("90s", now: now) == now.advanced(bySeconds: -90))
        #expect(TimeExpression.parse("15m", now: now) == now.advanced(bySeconds: -900))
        #expect(TimeExpression.parse("2h", now: now) == now.advanced(bySeconds: -7200))
        #expect(TimeExpression.parse("7d", now: now) == now.advanced(bySeconds: -604_800))
        #expect(TimeExpression.parse("2026-11-20T10:00:00Z", now: now) == RFC3339.parse("2026-11-20T10:00:00Z"))
        for bad in ["", "yesterday", "5x", "-5m", "m", "2026-13-01T00:00:00Z"] {
            #expect(TimeExpression.parse(bad, now: now) == nil, "\(bad)")
        }
    }

    @Test("an age too long for any time is refused, not a trap (found by fuzzing)")
    func ageBeyondTimestamps() {
        let now = Timestamp(microsecondsSinceEpoch: 1_795_000_000_000_000)
        for tooLong in ["4444444444444w", "1e15w", "1e300s", "9000000000001s"] {
            #expect(TimeExpression.parse(tooLong, now: now) == nil, "\(tooLong)")
        }
        #expect(TimeExpression.parse("9000000000000s", now: now) == now.advanced(bySeconds: -9e12))
    }
}
