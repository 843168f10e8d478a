import JSONLines
import MQTTPublisher
import Testing

@Suite("Topics, payloads and discovery documents")
struct MQTTLayoutTests {
    let layout = MQTTLayout(topicPrefix: "hrmd", discoveryPrefix: "homeassistant", gateway: "gw", publishesRRIntervals: false, version: "0.1.0")
    let strap = StrapDescription(
        identifier: "AA:BB:CC:DD:EE:FF", name: "Polar H10 12345", manufacturer: "Polar Electro Oy", model: "H10", firmwareVersion: "5.0.0")

    @Test("state and status topics")
    func topics() {
        #expect(layout.statusTopic == "hrmd/gw/status")
        #expect(layout.stateTopic(device: "AA:BB:CC:DD:EE:FF", .heartRate) == "hrmd/gw/aa-bb-cc-dd-ee-ff/heart-rate")
        #expect(layout.stateTopic(device: "mock-1", .battery) == "hrmd/gw/mock-1/battery")
        #expect(layout.stateTopic(device: "ant-12345", .contact) == "hrmd/gw/ant-12345/contact")
        #expect(layout.stateTopic(device: "serial-ttyACM0", .rrInterval).hasPrefix("hrmd/gw/serial-ttyacm0~"))
    }

    @Test("a device identifier becomes one topic level: as it is, folded, or folded with its digest", arguments: [
        ("AA:BB:CC:DD:EE:FF", "aa-bb-cc-dd-ee-ff"),
        ("ant-12345", "ant-12345"),
        ("mock-1", "mock-1"),
        ("strap-a", "strap-a"),
        ("a/b+c#d", "a_b_c_d~"),
        ("line\nbreak", "line_break~"),
        ("", "~"),
        ("Mock-2", "mock-2~"),
        ("aa-bb-cc-dd-ee-ff", "aa-bb-cc-dd-ee-ff~"),
    ])
    func topicLevels(device: String, level: String) {
        let made = MQTTLayout.topicLevel(device: device)
        if level.hasSuffix("~") {
            #expect(made.hasPrefix(level) && made.count == level.count + 16, "\(made)")
        } else {
            #expect(made == level)
        }
        #expect(!made.contains { "+#/".contains($0) || $0.isNewline })
    }

    @Test("identifiers that fold alike get topics and Home Assistant ids of their own", arguments: [
        ["AA:BB:CC:DD:EE:FF", "aa-bb-cc-dd-ee-ff", "aa:bb:cc:dd:ee:ff", "AA-BB-CC-DD-EE-FF"],
        ["Mock-2", "mock-2", "MOCK-2"],
        ["dev.1", "dev_1", "dev-1"],
        ["a/b", "a+b", "a_b", "a#b"],
    ])
    func injective(devices: [String]) {
        #expect(Set(devices.map { MQTTLayout.topicLevel(device: $0) }).count == devices.count)
        #expect(Set(devices.map { layout.strapID(device: $0) }).count == devices.count)
        for device in devices {
            #expect(layout.strapID(device: device).allSatisfy { $0.isASCII && ($0.isLowercase || $0.isNumber || $0 == "_" || $0 == "-") })
        }
    }

    @Test("discovery topics: DISCOVERY/COMPONENT/hrmd_GATEWAY_DEVICE/OBJECT/config, ids in [a-z0-9_-]")
    func discoveryTopics() {
        #expect(layout.discoveryTopic(device: "AA:BB:CC:DD:EE:FF", .heartRate) == "homeassistant/sensor/hrmd_gw_aa-bb-cc-dd-ee-ff/heart_rate/config")
        #expect(layout.discoveryTopic(device: "mock-1", .contact) == "homeassistant/binary_sensor/hrmd_gw_mock-1/contact/config")
        #expect(layout.discoveryTopic(device: "dev.1", .rrInterval).hasPrefix("homeassistant/sensor/hrmd_gw_dev_1_"))
        #expect(layout.gatewayDiscoveryTopic == "homeassistant/binary_sensor/hrmd_gw/status/config")
    }

    @Test("RR intervals are discovered only when published; each event type is a problem sensor")
    func measurements() {
        let events = [
            "homeassistant/binary_sensor/hrmd_gw_aa-bb-cc-dd-ee-ff/high_heart_rate_event/config",
            "homeassistant/binary_sensor/hrmd_gw_aa-bb-cc-dd-ee-ff/low_heart_rate_event/config",
            "homeassistant/binary_sensor/hrmd_gw_aa-bb-cc-dd-ee-ff/sensor_contact_lost/config",
            "homeassistant/binary_sensor/hrmd_gw_aa-bb-cc-dd-ee-ff/strap_battery_low/config",
            "homeassistant/binary_sensor/hrmd_gw_aa-bb-cc-dd-ee-ff/strap_disconnected/config",
        ]
        #expect(layout.discoveryMessages(for: strap).map(\.topic) == [
            "homeassistant/sensor/hrmd_gw_aa-bb-cc-dd-ee-ff/heart_rate/config",
            "homeassistant/sensor/hrmd_gw_aa-bb-cc-dd-ee-ff/battery/config",
            "homeassistant/binary_sensor/hrmd_gw_aa-bb-cc-dd-ee-ff/contact/config",
        ] + events)
        var withRR = layout
        withRR.publishesRRIntervals = true
        #expect(withRR.discoveryMessages(for: strap).count == 9)
        #expect(withRR.discoveryMessages(for: strap)[3].topic == "homeassistant/sensor/hrmd_gw_aa-bb-cc-dd-ee-ff/rr_interval/config")
        for measurement in StrapMeasurement.allCases where measurement.eventType != nil {
            guard case .object(let members) = layout.discoveryDocument(for: strap, measurement) else {
                Issue.record("not an object")
                continue
            }
            let document = Dictionary(members, uniquingKeysWith: { first, _ in first })
            #expect(document["device_class"] == .string("problem"))
            #expect(document["state_topic"] == .string("hrmd/gw/aa-bb-cc-dd-ee-ff/\(measurement.rawValue)"))
            #expect(document["json_attributes_topic"] == .string("hrmd/gw/aa-bb-cc-dd-ee-ff/\(measurement.rawValue)/attributes"))
            #expect(measurement.eventType.flatMap(StrapMeasurement.event) == measurement)
        }
    }

    @Test("the heart-rate document, key by key")
    func heartRateDocument() {
        #expect(layout.discoveryDocument(for: strap, .heartRate).serialized == """
            {"name":"Heart rate","unique_id":"hrmd_gw_aa-bb-cc-dd-ee-ff_heart_rate","state_topic":"hrmd/gw/aa-bb-cc-dd-ee-ff/heart-rate",\
            "unit_of_measurement":"bpm","state_class":"measurement","icon":"mdi:heart-pulse",\
            "availability_topic":"hrmd/gw/status","payload_available":"online","payload_not_available":"offline",\
            "device":{"identifiers":["hrmd_gw_aa-bb-cc-dd-ee-ff"],"name":"Polar H10 12345","manufacturer":"Polar Electro Oy","model":"H10",\
            "sw_version":"5.0.0","via_device":"hrmd_gw"},"origin":{"name":"hrmd","sw_version":"0.1.0"}}
            """)
    }

    @Test("battery, contact and RR documents carry their classes and payloads")
    func otherDocuments() {
        let battery = layout.discoveryDocument(for: strap, .battery).serialized
        #expect(battery.contains(#""device_class":"battery","unit_of_measurement":"%","state_class":"measurement""#))
        let contact = layout.discoveryDocument(for: strap, .contact).serialized
        #expect(contact.contains(#""payload_on":"detected","payload_off":"notDetected""#))
        #expect(!contact.contains("state_class"))
        let rr = layout.discoveryDocument(for: strap, .rrInterval).serialized
        #expect(rr.contains(#""device_class":"duration","unit_of_measurement":"ms""#))
    }

    @Test("a strap without a name is named by its identifier; strings are escaped")
    func bareStrap() {
        let document = layout.discoveryDocument(for: StrapDescription(identifier: "mock-1", model: "say \"hi\""), .heartRate).serialized
        #expect(document.contains(#""device":{"identifiers":["hrmd_gw_mock-1"],"name":"mock-1","model":"say \"hi\"","via_device":"hrmd_gw"}"#))
    }

    @Test("the gateway's document is the device the straps are connected through")
    func gatewayDocument() {
        let document = layout.gatewayDiscoveryDocument.serialized
        #expect(document.contains(#""state_topic":"hrmd/gw/status","payload_on":"online","payload_off":"offline","device_class":"connectivity""#))
        #expect(document.contains(#""identifiers":["hrmd_gw"]"#))
    }

    @Test("payloads: plain numbers and the contact words")
    func payloads() {
        #expect(MQTTLayout.valuePayload(62) == "62")
        #expect(MQTTLayout.valuePayload(812.5) == "812.5")
        #expect(MQTTLayout.contactPayload(true) == "detected")
        #expect(MQTTLayout.contactPayload(false) == "notDetected")
    }
}
