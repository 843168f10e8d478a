/// Where a heart-rate sensor is worn: the Body Sensor Location characteristic (GATT 0x2A38).
///
/// The value is exactly one byte: 0 other, 1 chest, 2 wrist, 3 finger, 4 hand, 5 ear lobe,
/// 6 foot. Values 7–255 are reserved for future use and do not decode
/// (``GATTDecodingError/reservedSensorLocation(_:)``): a location the daemon cannot name is
/// better reported than stored as a guess. (eisaev/blevalueparser decodes them as a valid
/// "unknown" location instead.) Any other length is ``GATTDecodingError/wrongLength(expected:actual:)``.
public enum BodySensorLocation: UInt8, Sendable, Hashable, CaseIterable {
    /// 0: somewhere else.
    case other = 0
    /// 1: chest (a chest strap).
    case chest
    /// 2: wrist.
    case wrist
    /// 3: finger.
    case finger
    /// 4: hand.
    case hand
    /// 5: ear lobe.
    case earLobe
    /// 6: foot.
    case foot

    /// The name used in configuration files and JSON, spelled as HealthKit spells its
    /// heart-rate sensor locations: `other`, `chest`, `wrist`, `finger`, `hand`, `earLobe`, `foot`.
    public var name: String {
        switch self {
        case .other: return "other"
        case .chest: return "chest"
        case .wrist: return "wrist"
        case .finger: return "finger"
        case .hand: return "hand"
        case .earLobe: return "earLobe"
        case .foot: return "foot"
        }
    }

    /// The location with this ``name``, ignoring case (`earLobe`, `earlobe` and `EARLOBE`
    /// all name ``earLobe``); `nil` for any other text.
    public init?(name: String) {
        let wanted = name.lowercased()
        guard let match = Self.allCases.first(where: { $0.name.lowercased() == wanted }) else { return nil }
        self = match
    }

    /// Decodes one raw Body Sensor Location value.
    ///
    /// - Parameter bytes: the value; exactly one byte.
    /// - Throws: ``GATTDecodingError/wrongLength(expected:actual:)`` unless there is exactly one
    ///   byte, ``GATTDecodingError/reservedSensorLocation(_:)`` for 7–255.
    public init(decoding bytes: some Collection<UInt8>) throws(GATTDecodingError) {
        let count = bytes.count
        guard count == 1, let raw = bytes.first else { throw .wrongLength(expected: 1, actual: count) }
        guard let location = Self(rawValue: raw) else { throw .reservedSensorLocation(raw) }
        self = location
    }

    /// The raw one-byte 0x2A38 value.
    public func encoded() -> [UInt8] { [rawValue] }
}
