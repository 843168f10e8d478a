/// The string characteristics that describe a device: GAP Device Name (0x2A00) and the Device
/// Information service (0x180A).
public enum DeviceInformationField: Sendable, Hashable, CaseIterable {
    case deviceName, manufacturerName, modelNumber, hardwareRevision, firmwareRevision, softwareRevision

    /// The field a characteristic carries, if it is one of these.
    public init?(_ characteristic: CharacteristicID) {
        guard let field = Self.allCases.first(where: { $0.characteristic == characteristic }) else { return nil }
        self = field
    }

    /// The fields of the Device Information service (0x180A), in the order a strap's are read
    /// after connecting.
    public static let deviceInformationService: [DeviceInformationField] = [
        .manufacturerName, .modelNumber, .hardwareRevision, .firmwareRevision, .softwareRevision,
    ]

    public var characteristic: CharacteristicID {
        switch self {
        case .deviceName: CharacteristicID(rawValue: 0x2A00)
        case .manufacturerName: CharacteristicID(rawValue: 0x2A29)
        case .modelNumber: CharacteristicID(rawValue: 0x2A24)
        case .hardwareRevision: CharacteristicID(rawValue: 0x2A27)
        case .firmwareRevision: CharacteristicID(rawValue: 0x2A26)
        case .softwareRevision: CharacteristicID(rawValue: 0x2A28)
        }
    }

    /// The value as text: UTF-8 with trailing NULs and spaces removed (some straps pad);
    /// nil when empty after trimming.
    public static func decodeString(_ bytes: [UInt8]) -> String? {
        var end = bytes.count
        while end > 0, bytes[end - 1] == 0 || bytes[end - 1] == 0x20 { end -= 1 }
        guard end > 0 else { return nil }
        return String(decoding: bytes[..<end], as: UTF8.self)
    }
}

/// Battery Level (0x2A19): one byte, percent 0…100.
public enum BatteryLevel {
    public static func decode(_ bytes: [UInt8]) throws(GATTDecodingError) -> Int {
        guard bytes.count == 1 else { throw .wrongLength(expected: 1, actual: bytes.count) }
        guard bytes[0] <= 100 else { throw .truncated(field: "battery level (above 100%)", needed: 1, available: 0) }
        return Int(bytes[0])
    }
}
