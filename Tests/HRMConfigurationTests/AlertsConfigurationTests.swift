import HRMConfiguration
import HeartRateEvents
import Testing

@Suite("The [alerts] section")
struct AlertsConfigurationTests {
    @Test("without the section, the default rules")
    func defaults() throws {
        #expect(try DaemonConfiguration(text: "[hrmd]\nsensor = mock\n", file: "f").alerts == .defaults)
        #expect(try DaemonConfiguration(text: "[alerts]\n", file: "f").alerts == .defaults)
        #expect(DaemonConfiguration().alerts == .defaults)
    }

    @Test("every key parses")
    func everyKey() throws {
        let text = """
            [alerts]
            high = 150
            high-for = 5m
            low = 45.5
            low-for = 1h
            contact-lost-for = 90
            battery-low = 20
            """
        let rules = try DaemonConfiguration(text: text, file: "hrmd.conf").alerts
        #expect(rules == AlertRules(high: 150, highFor: .seconds(300), low: 45.5, lowFor: .seconds(3600), contactLostFor: .seconds(90), batteryLow: 20))
        #expect(try DaemonConfiguration(text: "[alerts]\nhigh-for = 30s\nlow-for = 2.5\n", file: "f").alerts.lowFor == .milliseconds(2500))
    }

    @Test("absurd values are refused in one line naming the file, the line and the key", arguments: [
        ("[alerts]\nhigh = 300\n", 2, "high"),
        ("[alerts]\nhigh = 19\n", 2, "high"),
        ("[alerts]\nhigh = nan\n", 2, "high"),
        ("[alerts]\nhigh = fast\n", 2, "high"),
        ("[alerts]\nlow = 10\n", 2, "low"),
        ("[alerts]\nlow = -inf\n", 2, "low"),
        ("[alerts]\nlow = 130\n", 2, "low"),
        ("[alerts]\nlow = 50\n\nhigh = 50\n", 4, "high"),
        ("[alerts]\nhigh = 100\nlow = 110\n", 3, "low"),
        ("[alerts]\nhigh-for = 0.5s\n", 2, "high-for"),
        ("[alerts]\nhigh-for = 0\n", 2, "high-for"),
        ("[alerts]\nlow-for = 25h\n", 2, "low-for"),
        ("[alerts]\nlow-for = 2w\n", 2, "low-for"),
        ("[alerts]\ncontact-lost-for = soon\n", 2, "contact-lost-for"),
        ("[alerts]\ncontact-lost-for = nan\n", 2, "contact-lost-for"),
        ("[alerts]\ncontact-lost-for = -30s\n", 2, "contact-lost-for"),
        ("[alerts]\nbattery-low = 0\n", 2, "battery-low"),
        ("[alerts]\nbattery-low = 100\n", 2, "battery-low"),
        ("[alerts]\nbattery-low = 10.5\n", 2, "battery-low"),
        ("[alerts]\nbattery-low = ten\n", 2, "battery-low"),
        ("[hrmd]\nsensor = mock\n[alerts]\nhigh = 150\ncolour = red\n", 5, "colour"),
    ])
    func refuses(text: String, line: Int, key: String) {
        #expect {
            _ = try DaemonConfiguration(text: text, file: "hrmd.conf")
        } throws: { error in
            guard let error = error as? ConfigurationError, case .invalidLine(file: "hrmd.conf", line: line, key: key, _) = error else { return false }
            return error.description.hasPrefix("hrmd.conf:\(line): key '\(key)': ") && !error.description.contains("\n")
        }
    }

    @Test("an unknown key lists the known ones; the section is among the known ones")
    func unknownKey() throws {
        do {
            _ = try DaemonConfiguration(text: "[alerts]\nhigh-after = 10m\n", file: "hrmd.conf")
            Issue.record("accepted an unknown key")
        } catch {
            #expect(error.description == "hrmd.conf:2: key 'high-after': unknown key (known: high, high-for, low, low-for, contact-lost-for, battery-low, disconnected-for)")
        }
        do {
            _ = try DaemonConfiguration(text: "[alert]\nhigh = 150\n", file: "hrmd.conf")
            Issue.record("accepted an unknown section")
        } catch {
            #expect(error.description.contains("[alerts]"))
        }
    }

    @Test("low must be below high, whichever comes first; the message says both")
    func lowBelowHigh() throws {
        #expect(try DaemonConfiguration(text: "[alerts]\nlow = 110\nhigh = 140\n", file: "f").alerts.low == 110)
        do {
            _ = try DaemonConfiguration(text: "[alerts]\nlow = 125\n", file: "hrmd.conf")
            Issue.record("accepted low above the default high")
        } catch {
            #expect(error.description == "hrmd.conf:2: key 'low': low 125 count/min is not below high 120 count/min")
        }
    }
}
