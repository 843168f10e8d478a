import JSONLines

/// What a strap publishes: one state topic each, and one Home Assistant entity each.
public enum StrapMeasurement: String, Sendable, CaseIterable {
    case heartRate = "heart-rate"
    case battery
    case contact
    case rrInterval = "rr-interval"

    /// The last level of the state topic.
    public var topicLevel: String { rawValue }
    /// The discovery document's object id, and the end of the entity's unique id.
    public var objectID: String { String(rawValue.map { $0 == "-" ? "_" : $0 }) }
    /// Home Assistant's component: contact is on or off, the rest are numbers.
    public var component: String { self == .contact ? "binary_sensor" : "sensor" }
}

/// A strap as Home Assistant's device registry shows it.
public struct StrapDescription: Sendable, Equatable {
    /// The device identifier as hrmd knows it (a BLE address, `ant-12345`, `mock-1`).
    public var identifier: String
    public var name: String?
    public var manufacturer: String?
    public var model: String?
    public var firmwareVersion: String?
    public var hardwareVersion: String?

    public init(
        identifier: String, name: String? = nil, manufacturer: String? = nil, model: String? = nil,
        firmwareVersion: String? = nil, hardwareVersion: String? = nil
    ) {
        self.identifier = identifier
        self.name = name
        self.manufacturer = manufacturer
        self.model = model
        self.firmwareVersion = firmwareVersion
        self.hardwareVersion = hardwareVersion
    }
}

/// Where hrmd publishes and what, as pure code: the state topics `PREFIX/GATEWAY/DEVICE/…`,
/// the gateway's status topic, the payloads, and Home Assistant's MQTT discovery documents
/// (`DISCOVERY/COMPONENT/hrmd_GATEWAY_DEVICE/OBJECT/config`, retained), so that each strap
/// appears as a device with its sensors, through the gateway's own device.
public struct MQTTLayout: Sendable, Equatable {
    public var topicPrefix: String
    public var discoveryPrefix: String
    /// The gateway's name, already `[a-z0-9_-]`.
    public var gateway: String
    public var publishesRRIntervals: Bool
    /// hrmd's version, for the documents' origin and the gateway device.
    public var version: String

    /// The status payloads: `online` while connected, `offline` as the last will and at a clean stop.
    public static let online = "online"
    public static let offline = "offline"

    public init(topicPrefix: String, discoveryPrefix: String, gateway: String, publishesRRIntervals: Bool, version: String) {
        self.topicPrefix = topicPrefix
        self.discoveryPrefix = discoveryPrefix
        self.gateway = gateway
        self.publishesRRIntervals = publishesRRIntervals
        self.version = version
    }

    /// The measurements a strap publishes: RR intervals only when asked.
    public var measurements: [StrapMeasurement] {
        publishesRRIntervals ? StrapMeasurement.allCases : StrapMeasurement.allCases.filter { $0 != .rrInterval }
    }

    /// `PREFIX/GATEWAY/status`: `online` or `offline`, retained.
    public var statusTopic: String { "\(topicPrefix)/\(gateway)/status" }

    /// `PREFIX/GATEWAY/DEVICE/MEASUREMENT`.
    public func stateTopic(device: String, _ measurement: StrapMeasurement) -> String {
        "\(topicPrefix)/\(gateway)/\(Self.topicLevel(device: device))/\(measurement.topicLevel)"
    }

    /// A device identifier as one topic level: lower case, `:` as `-`, and `+`, `#`, `/`
    /// (and control characters) as `_`.
    public static func topicLevel(device: String) -> String {
        let level = String(
            String.UnicodeScalarView(
                device.lowercased().unicodeScalars.map { scalar -> Unicode.Scalar in
                    switch scalar {
                    case ":": "-"
                    case "+", "#", "/": "_"
                    case _ where scalar.value < 0x20 || scalar.value == 0x7F: "_"
                    default: scalar
                    }
                }))
        return level.isEmpty ? "_" : level
    }

    /// The strap's id in Home Assistant: `hrmd_GATEWAY_DEVICE` in `[a-z0-9_-]` (the node id of
    /// its discovery topics, its device identifier, the start of its entities' unique ids).
    public func strapID(device: String) -> String {
        let level = Self.topicLevel(device: device).unicodeScalars.map { scalar -> Character in
            switch scalar {
            case "a"..."z", "0"..."9", "_", "-": Character(scalar)
            default: "_"
            }
        }
        return "hrmd_\(gateway)_\(String(level))"
    }

    /// The gateway's own device in Home Assistant (the straps' `via_device`).
    public var gatewayID: String { "hrmd_\(gateway)" }

    /// `DISCOVERY/COMPONENT/hrmd_GATEWAY_DEVICE/OBJECT/config`.
    public func discoveryTopic(device: String, _ measurement: StrapMeasurement) -> String {
        "\(discoveryPrefix)/\(measurement.component)/\(strapID(device: device))/\(measurement.objectID)/config"
    }

    /// The gateway's connectivity sensor: `DISCOVERY/binary_sensor/hrmd_GATEWAY/status/config`.
    public var gatewayDiscoveryTopic: String { "\(discoveryPrefix)/binary_sensor/\(gatewayID)/status/config" }

    /// Every discovery document of a strap, topic and JSON, in a fixed order.
    public func discoveryMessages(for strap: StrapDescription) -> [(topic: String, document: String)] {
        measurements.map { (discoveryTopic(device: strap.identifier, $0), discoveryDocument(for: strap, $0).serialized) }
    }

    /// One entity's discovery document.
    public func discoveryDocument(for strap: StrapDescription, _ measurement: StrapMeasurement) -> JSONValue {
        let id = strapID(device: strap.identifier)
        var members: [(String, JSONValue)] = [
            ("name", .string(Self.entityName(measurement))),
            ("unique_id", .string("\(id)_\(measurement.objectID)")),
            ("state_topic", .string(stateTopic(device: strap.identifier, measurement))),
        ]
        switch measurement {
        case .heartRate:
            members += [
                ("unit_of_measurement", .string("bpm")), ("state_class", .string("measurement")),
                ("icon", .string("mdi:heart-pulse")),
            ]
        case .battery:
            members += [
                ("device_class", .string("battery")), ("unit_of_measurement", .string("%")),
                ("state_class", .string("measurement")), ("entity_category", .string("diagnostic")),
                ("icon", .string("mdi:battery")),
            ]
        case .contact:
            members += [
                ("payload_on", .string(Self.contactPayload(true))), ("payload_off", .string(Self.contactPayload(false))),
                ("icon", .string("mdi:gesture-tap")),
            ]
        case .rrInterval:
            members += [
                ("device_class", .string("duration")), ("unit_of_measurement", .string("ms")),
                ("state_class", .string("measurement")), ("icon", .string("mdi:timer-outline")),
            ]
        }
        var device: [(String, JSONValue)] = [
            ("identifiers", .array([.string(id)])),
            ("name", .string(strap.name ?? strap.identifier)),
        ]
        if let manufacturer = strap.manufacturer { device.append(("manufacturer", .string(manufacturer))) }
        if let model = strap.model { device.append(("model", .string(model))) }
        if let firmware = strap.firmwareVersion { device.append(("sw_version", .string(firmware))) }
        if let hardware = strap.hardwareVersion { device.append(("hw_version", .string(hardware))) }
        device.append(("via_device", .string(gatewayID)))
        members += [
            ("availability_topic", .string(statusTopic)),
            ("payload_available", .string(Self.online)),
            ("payload_not_available", .string(Self.offline)),
            ("device", .object(device)),
            ("origin", origin),
        ]
        return .object(members)
    }

    /// The gateway's discovery document: a connectivity sensor on the status topic, and the
    /// device every strap is connected through.
    public var gatewayDiscoveryDocument: JSONValue {
        .object([
            ("name", .string("Broker connection")),
            ("unique_id", .string("\(gatewayID)_status")),
            ("state_topic", .string(statusTopic)),
            ("payload_on", .string(Self.online)),
            ("payload_off", .string(Self.offline)),
            ("device_class", .string("connectivity")),
            ("entity_category", .string("diagnostic")),
            (
                "device",
                .object([
                    ("identifiers", .array([.string(gatewayID)])),
                    ("name", .string("hrmd on \(gateway)")),
                    ("manufacturer", .string("hrmd")),
                    ("model", .string("hrmd heart-rate gateway")),
                    ("sw_version", .string(version)),
                ])
            ),
            ("origin", origin),
        ])
    }

    private var origin: JSONValue { .object([("name", .string("hrmd")), ("sw_version", .string(version))]) }

    private static func entityName(_ measurement: StrapMeasurement) -> String {
        switch measurement {
        case .heartRate: "Heart rate"
        case .battery: "Battery"
        case .contact: "Skin contact"
        case .rrInterval: "RR interval"
        }
    }

    /// A value as its state payload: a plain number, integers without a fraction.
    public static func valuePayload(_ value: Double) -> String {
        guard value.isFinite else { return "nan" }
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return "\(value)"
    }

    /// Contact as its state payload: `detected` or `notDetected` (the store's metadata words).
    public static func contactPayload(_ detected: Bool) -> String { detected ? "detected" : "notDetected" }
}
