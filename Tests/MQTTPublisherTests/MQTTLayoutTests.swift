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
        #expect(layout.stateTopic(device: "serial-ttyACM0", .rrInterval) == "hrmd/gw/serial-ttyacm0/rr-interval")
    }

    @Test("a device identifier becomes one topic level", arguments: [
        ("AA:BB:CC:DD:EE:FF", "aa-bb-cc-dd-ee-ff"),
        ("a/b+c#d", "a_b_c_d"),
        ("line\nbreak", "line_break"),
        ("", "_"),
        ("Mock-2", "mock-2"),
    ])
    func topicLevels(device: String, level: String) {
        #expect(MQTTLayout.topicLevel(device: device) == level)
    }

    @Test("discovery topics: DISCOVERY/COMPONENT/hrmd_GATEWAY_DEVICE/OBJECT/config, ids in [a-z0-9_-]")
    func discoveryTopics() {
        #expect(layout.discoveryTopic(device: "AA:BB:CC:DD:EE:FF", .heartRate) == "homeassistant/sensor/hrmd_gw_aa-bb-cc-dd-ee-ff/heart_rate/config")
        #expect(layout.discoveryTopic(device: "mock-1", .contact) == "homeassistant/binary_sensor/hrmd_gw_mock-1/contact/config")
        #expect(layout.discoveryTopic(device: "dev.1", .rrInterval) == "homeassistant/sensor/hrmd_gw_dev_1/rr_interval/config")
        #expect(layout.gatewayDiscoveryTopic == "homeassistant/binary_sensor/hrmd_gw/status/config")
    }

    @Test("RR intervals are discovered only when published")
    func measurements() {
        #expect(layout.discoveryMessages(for: strap).map(\.topic) == [
            "homeassistant/sensor/hrmd_gw_aa-bb-cc-dd-ee-ff/heart_rate/config",
            "homeassistant/sensor/hrmd_gw_aa-bb-cc-dd-ee-ff/battery/config",
            "homeassistant/binary_sensor/hrmd_gw_aa-bb-cc-dd-ee-ff/contact/config",
        ])
        var withRR = layout
        withRR.publishesRRIntervals = true
        #expect(withRR.discoveryMessages(for: strap).count == 4)
        #expect(withRR.discoveryMessages(for: strap).last?.topic == "homeassistant/sensor/hrmd_gw_aa-bb-cc-dd-ee-ff/rr_interval/config")
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
