import Crypto
import JSONLines
import HealthModel

/// What a strap publishes: one state topic each, and one Home Assistant entity each.
public enum StrapMeasurement: String, Sendable, CaseIterable {
    case heartRate = "heart-rate"
    case battery
    case contact
    case rrInterval = "rr-interval"
    /// Whether the strap has an open event of a type: a problem, on or off.
    case highHeartRateEvent = "high-heart-rate-event"
    case lowHeartRateEvent = "low-heart-rate-event"
    case sensorContactLost = "sensor-contact-lost"
    case strapBatteryLow = "strap-battery-low"
    case strapDisconnected = "strap-disconnected"

    /// The last level of the state topic.
    public var topicLevel: String { rawValue }
    /// The discovery document's object id, and the end of the entity's unique id.
    public var objectID: String { String(rawValue.map { $0 == "-" ? "_" : $0 }) }
    /// Home Assistant's component: contact and the events are on or off, the rest are numbers.
    public var component: String { self == .contact || eventType != nil ? "binary_sensor" : "sensor" }

    /// The event type whose open events the measurement tells of.
    public var eventType: SampleType? { SampleType.eventTypes.first { $0.identifier == rawValue } }

    /// The measurement that tells of events of `type`.
    public static func event(_ type: SampleType) -> StrapMeasurement? { allCases.first { $0.eventType == type } }

    /// Published as the strap's state changes, retained (the rest go with each sample).
    var isRetained: Bool { self == .battery || self == .contact || eventType != nil }
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

    /// A device identifier as one topic level, one level per identifier (no two identifiers
    /// share one, so a device cannot publish on another's topics): a Bluetooth address as lower
    /// case with `-` (`AA:BB:CC:DD:EE:FF` → `aa-bb-cc-dd-ee-ff`), an identifier of lower-case
    /// letters, digits, `.`, `_` and `-` as it is (`ant-12345`, `mock-1`); any other (capitals,
    /// other characters, one spelled like a folded address) folded the same way with `~` and
    /// the first 16 hex digits of its SHA-256 after it (`serial-ttyACM0` → `serial-ttyacm0~…`).
    public static func topicLevel(device: String) -> String {
        if BluetoothAddressForm.isCanonical(device) { return device.lowercased().replacingOccurrences(of: ":", with: "-") }
        let kept = device.unicodeScalars.allSatisfy(isPlain) && !device.isEmpty && !BluetoothAddressForm.isFolded(device)
        if kept { return device }
        let folded = String(
            String.UnicodeScalarView(device.lowercased().unicodeScalars.map { isPlain($0) ? $0 : $0 == ":" ? "-" : "_" }))
        return folded + "~" + digest(device)
    }

    /// The strap's id in Home Assistant: `hrmd_GATEWAY_DEVICE` in `[a-z0-9_-]` (the node id of
    /// its discovery topics, its device identifier, the start of its entities' unique ids),
    /// one per device as its topic level is.
    public func strapID(device: String) -> String {
        let level = Self.topicLevel(device: device)
        let id = String(
            String.UnicodeScalarView(level.unicodeScalars.map { scalar -> Unicode.Scalar in
                switch scalar {
                case "a"..."z", "0"..."9", "_", "-": scalar
                default: "_"
                }
            }))
        // A level with a `.` (or a digest's `~`) folds here; the digest keeps it apart.
        let apart = id == level || level.contains("~") ? id : id + "_" + Self.digest(device)
        return "hrmd_\(gateway)_\(apart)"
    }

    private static func isPlain(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar {
        case "a"..."z", "0"..."9", ".", "_", "-": true
        default: false
        }
    }

    /// The first 16 hex digits of the SHA-256 of `device`.
    private static func digest(_ device: String) -> String {
        SHA256.hash(data: Array(device.utf8)).prefix(8).map { byte in
            let hex = String(byte, radix: 16)
            return byte < 16 ? "0" + hex : hex
        }.joined()
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
        case .highHeartRateEvent, .lowHeartRateEvent, .sensorContactLost, .strapBatteryLow, .strapDisconnected:
            members += [
                ("device_class", .string("problem")),
                ("payload_on", .string(Self.problemPayload(true))), ("payload_off", .string(Self.problemPayload(false))),
                ("json_attributes_topic", .string(attributesTopic(device: strap.identifier, measurement))),
            ]
            if measurement == .sensorContactLost || measurement == .strapBatteryLow || measurement == .strapDisconnected {
                members.append(("entity_category", .string("diagnostic")))
            }
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

    /// Who wrote a discovery document: hrmd and its version.
    var origin: JSONValue { .object([("name", .string("hrmd")), ("sw_version", .string(version))]) }

    private static func entityName(_ measurement: StrapMeasurement) -> String {
        switch measurement {
        case .heartRate: "Heart rate"
        case .battery: "Battery"
        case .contact: "Skin contact"
        case .rrInterval: "RR interval"
        case .highHeartRateEvent: "High heart rate"
        case .lowHeartRateEvent: "Low heart rate"
        case .sensorContactLost: "Contact lost"
        case .strapBatteryLow: "Battery low"
        case .strapDisconnected: "Disconnected"
        }
    }

    /// `PREFIX/GATEWAY/DEVICE/EVENT-TYPE/attributes`: the strap's last event of the type as
    /// JSON (as `hrmctl events --output json` prints it), retained.
    public func attributesTopic(device: String, _ measurement: StrapMeasurement) -> String {
        stateTopic(device: device, measurement) + "/attributes"
    }

    /// An event type's state payload: `ON` while the strap has an open event of it, else `OFF`.
    public static func problemPayload(_ open: Bool) -> String { open ? "ON" : "OFF" }

    /// A value as its state payload: a plain number, integers without a fraction.
    public static func valuePayload(_ value: Double) -> String {
        guard value.isFinite else { return "nan" }
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return "\(value)"
    }

    /// Contact as its state payload: `detected` or `notDetected` (the store's metadata words).
    public static func contactPayload(_ detected: Bool) -> String { detected ? "detected" : "notDetected" }
}

/// Bluetooth addresses as device identifiers spell them (`AA:BB:CC:DD:EE:FF`), and as a topic
/// level folds them (`aa-bb-cc-dd-ee-ff`).
enum BluetoothAddressForm {
    static func isCanonical(_ text: String) -> Bool { matches(text, separator: ":", digits: "0123456789ABCDEF") }
    static func isFolded(_ text: String) -> Bool { matches(text, separator: "-", digits: "0123456789abcdef") }

    private static func matches(_ text: String, separator: Character, digits: String) -> Bool {
        let characters = Array(text)
        guard characters.count == 17 else { return false }
        return characters.indices.allSatisfy { index in
            index % 3 == 2 ? characters[index] == separator : digits.contains(characters[index])
        }
    }
}
