/// The program that wrote a sample (HKSource with its HKSourceRevision's version).
public struct HealthSource: Codable, Sendable, Hashable {
    /// The name authorization is granted to, e.g. `hrmd`.
    public var name: String
    public var version: String?

    public init(name: String, version: String? = nil) {
        self.name = name
        self.version = version
    }

    /// The name of the recording daemon's own source: the one that reads device details off
    /// the straps themselves.
    public static let daemonName = "hrmd"
    /// The one source that writes events (``HealthEvent``): the recording daemon, as the system
    /// writes HealthKit's heart-rate events.
    public static let eventWriter = daemonName
}

/// The hardware that measured a sample (HKDevice). `localIdentifier` (a BLE address, an ANT
/// device number, `mock-1`) names it; the other fields describe it and are updated as they
/// become known. Coded as every front shows a device: `identifier` for `localIdentifier`,
/// the other fields by their names.
public struct HealthDevice: Codable, Sendable, Hashable {
    private enum CodingKeys: String, CodingKey {
        case localIdentifier = "identifier"
        case name, manufacturer, model, hardwareVersion, firmwareVersion, softwareVersion
    }

    public var localIdentifier: String
    public var name: String?
    public var manufacturer: String?
    public var model: String?
    public var hardwareVersion: String?
    public var firmwareVersion: String?
    public var softwareVersion: String?

    public init(
        localIdentifier: String, name: String? = nil, manufacturer: String? = nil, model: String? = nil,
        hardwareVersion: String? = nil, firmwareVersion: String? = nil, softwareVersion: String? = nil
    ) {
        self.localIdentifier = localIdentifier
        self.name = name
        self.manufacturer = manufacturer
        self.model = model
        self.hardwareVersion = hardwareVersion
        self.firmwareVersion = firmwareVersion
        self.softwareVersion = softwareVersion
    }
}

/// Where on the body a heart-rate sensor sits; the same set and order as HealthKit's
/// `HKHeartRateSensorLocation` (and BLE's Body Sensor Location).
public enum HeartRateSensorLocation: Int, Codable, Sendable, Hashable, CaseIterable {
    case other = 0, chest, wrist, finger, hand, earLobe, foot

    /// The metadata value: `other`, `chest`, `wrist`, `finger`, `hand`, `earLobe`, `foot`.
    public var name: String {
        switch self {
        case .other: "other"
        case .chest: "chest"
        case .wrist: "wrist"
        case .finger: "finger"
        case .hand: "hand"
        case .earLobe: "earLobe"
        case .foot: "foot"
        }
    }

    public init?(name: String) {
        guard let match = Self.allCases.first(where: { $0.name == name }) else { return nil }
        self = match
    }
}

/// The metadata of a sample: typed keys the store understands, plus free-form strings.
public struct SampleMetadata: Codable, Sendable, Hashable {
    /// `sensorLocation` (HKMetadataKeyHeartRateSensorLocation); nil when the sensor never said.
    public var sensorLocation: HeartRateSensorLocation?
    /// Whether the sensor reported skin contact; nil when it does not report contact.
    public var sensorContact: Bool?
    /// With `syncVersion`, makes saves idempotent across re-imports: a save with the same
    /// source and identifier replaces the stored sample only when its version is higher
    /// (HKMetadataKeySyncIdentifier / HKMetadataKeySyncVersion).
    public var syncIdentifier: String?
    public var syncVersion: Int?
    /// Any other keys, kept as strings.
    public var extra: [String: String]

    public init(
        sensorLocation: HeartRateSensorLocation? = nil, sensorContact: Bool? = nil,
        syncIdentifier: String? = nil, syncVersion: Int? = nil, extra: [String: String] = [:]
    ) {
        self.sensorLocation = sensorLocation
        self.sensorContact = sensorContact
        self.syncIdentifier = syncIdentifier
        self.syncVersion = syncVersion
        self.extra = extra
    }

    public static let empty = SampleMetadata()
}
