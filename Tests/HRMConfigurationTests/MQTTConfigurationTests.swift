import HRMConfiguration
import Testing

@Suite("The [mqtt] section")
struct MQTTConfigurationTests {
    @Test("a full section parses")
    func fullSection() throws {
        let text = """
            [hrmd]
            sensor = mock
            [mqtt]
            broker = mqtts://broker.lan
            username = hrmd
            password-file = /etc/hrmd/mqtt-password
            ca-file = /etc/hrmd/ca.pem
            topic-prefix = home/hrmd
            discovery-prefix = ha
            gateway = kitchen-pc
            client-id = hrmd-kitchen
            rr = yes
            discovery = no
            """
        let section = try #require(try DaemonConfiguration(text: text, file: "hrmd.conf").mqtt)
        #expect(section.broker == MQTTBroker(host: "broker.lan", port: 8883, usesTLS: true))
        #expect(section.username == "hrmd")
        #expect(section.passwordFile == "/etc/hrmd/mqtt-password")
        #expect(section.caFile == "/etc/hrmd/ca.pem")
        #expect(section.topicPrefix == "home/hrmd")
        #expect(section.discoveryPrefix == "ha")
        #expect(section.gateway == "kitchen-pc")
        #expect(section.clientID == "hrmd-kitchen")
        #expect(section.publishesRRIntervals)
        #expect(!section.publishesDiscovery)
    }

    @Test("defaults: off without the section; prefixes, rr and discovery with only a broker")
    func defaults() throws {
        #expect(try DaemonConfiguration(text: "[hrmd]\nsensor = mock\n", file: "f").mqtt == nil)
        let section = try #require(try DaemonConfiguration(text: "[mqtt]\nbroker = mqtt://127.0.0.1\n", file: "f").mqtt)
        #expect(section.broker == MQTTBroker(host: "127.0.0.1", port: 1883, usesTLS: false))
        #expect(section.topicPrefix == "hrmd" && section.discoveryPrefix == "homeassistant")
        #expect(section.gateway == nil && section.clientID == nil && section.username == nil && section.passwordFile == nil)
        #expect(!section.publishesRRIntervals && section.publishesDiscovery)
    }

    @Test("broker addresses", arguments: [
        ("mqtt://127.0.0.1:1884", MQTTBroker(host: "127.0.0.1", port: 1884, usesTLS: false)),
        ("mqtt://broker", MQTTBroker(host: "broker", port: 1883, usesTLS: false)),
        ("mqtts://broker.example.org", MQTTBroker(host: "broker.example.org", port: 8883, usesTLS: true)),
        ("mqtts://broker:18883/", MQTTBroker(host: "broker", port: 18883, usesTLS: true)),
        ("mqtt://[::1]:1883", MQTTBroker(host: "::1", port: 1883, usesTLS: false)),
        ("mqtts://[fd00::5]", MQTTBroker(host: "fd00::5", port: 8883, usesTLS: true)),
    ] as [(String, MQTTBroker)])
    func brokers(text: String, broker: MQTTBroker) {
        #expect(MQTTBroker(text) == broker)
    }

    @Test("not broker addresses", arguments: ["127.0.0.1:1883", "http://broker", "mqtt://", "mqtt://broker:0", "mqtt://broker:99999", "mqtt://a b"])
    func notBrokers(text: String) {
        #expect(MQTTBroker(text) == nil)
    }

    @Test("an unknown key names the file, the line and the key, and lists the known ones")
    func unknownKey() {
        #expect(throws: ConfigurationError.invalidLine(
            file: "/etc/hrmd/hrmd.conf", line: 3, key: "pasword",
            message: "unknown key (known: broker, username, password-file, ca-file, topic-prefix, discovery-prefix, gateway, client-id, rr, discovery)")) {
            try DaemonConfiguration(text: "[mqtt]\nbroker = mqtt://h\npasword = x\n", file: "/etc/hrmd/hrmd.conf")
        }
    }

    @Test("bad values and combinations are errors at their line", arguments: [
        ("[mqtt]\nbroker = tcp://h", 2, "broker"),
        ("[mqtt]\nbroker = mqtt://h\nrr = sometimes", 3, "rr"),
        ("[mqtt]\nbroker = mqtt://h\ndiscovery = 1x", 3, "discovery"),
        ("[mqtt]\nbroker = mqtt://h\npassword-file = secret.txt", 3, "password-file"),
        ("[mqtt]\nbroker = mqtt://h\nca-file = ca.pem", 3, "ca-file"),
        ("[mqtt]\nbroker = mqtt://h\ntopic-prefix = hrmd/#", 3, "topic-prefix"),
        ("[mqtt]\nbroker = mqtt://h\ntopic-prefix = /hrmd", 3, "topic-prefix"),
        ("[mqtt]\nbroker = mqtt://h\ndiscovery-prefix = home+assistant", 3, "discovery-prefix"),
        ("[mqtt]\nbroker = mqtt://h\ngateway = Kitchen PC", 3, "gateway"),
        ("[mqtt]\nbroker = mqtt://h\nclient-id = two words", 3, "client-id"),
        ("[mqtt]\nbroker = mqtt://h\n\npassword-file = /etc/p", 4, "password-file"),
        ("[mqtt]\nbroker = mqtt://h\nca-file = /etc/ca.pem", 3, "ca-file"),
        ("[hrmd]\nsensor = mock\n[mqtt]\nusername = u", 4, "broker"),
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
            #expect(file == "f.conf" && errorLine == line && errorKey == key, "\(error)")
            #expect(error.description.hasPrefix("f.conf:\(line): key '\(key)'"))
        }
    }
}
