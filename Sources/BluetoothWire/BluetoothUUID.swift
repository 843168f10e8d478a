/// A Bluetooth UUID: a 16-bit alias of the Bluetooth base UUID (`0000xxxx-0000-1000-8000-00805f9b34fb`)
/// or a full 128-bit UUID. Attribute protocol packets carry both least significant byte first.
public struct BluetoothUUID: Hashable, Sendable, CustomStringConvertible {
    /// The 16 bytes, least significant first (as on the wire).
    private let wire: [UInt8]

    /// The base UUID's bytes, least significant first, with the alias bytes (12 and 13) zero.
    private static let base: [UInt8] = [0xFB, 0x34, 0x9B, 0x5F, 0x80, 0x00, 0x00, 0x80, 0x00, 0x10, 0x00, 0x00, 0, 0, 0x00, 0x00]

    /// The 16-bit alias `short` of the Bluetooth base UUID.
    public init(_ short: UInt16) {
        var wire = Self.base
        wire[12] = UInt8(truncatingIfNeeded: short)
        wire[13] = UInt8(truncatingIfNeeded: short >> 8)
        self.init(wire: wire)
    }

    private init(wire: [UInt8]) {
        self.wire = wire
    }

    /// Reads a UUID as ATT carries it: 2 bytes (a 16-bit alias) or 16 bytes, least
    /// significant first. A 128-bit UUID on the base folds to its 16-bit alias.
    public init?(littleEndian bytes: some Collection<UInt8>) {
        let bytes = Array(bytes)
        switch bytes.count {
        case 2: self.init(UInt16(bytes[0]) | UInt16(bytes[1]) << 8)
        case 16: self.init(wire: bytes)
        default: return nil
        }
    }

    /// The 16-bit alias, when this UUID is on the Bluetooth base with zero upper bytes.
    public var short: UInt16? {
        guard wire[0..<12].elementsEqual(Self.base[0..<12]), wire[14] == 0, wire[15] == 0 else { return nil }
        return UInt16(wire[12]) | UInt16(wire[13]) << 8
    }

    /// The UUID as ATT carries it: 2 bytes when it has a 16-bit alias, else 16; least significant first.
    public var littleEndian: [UInt8] {
        guard let short else { return wire }
        return [UInt8(truncatingIfNeeded: short), UInt8(truncatingIfNeeded: short >> 8)]
    }

    /// `180d` for a 16-bit alias; `6e400001-b5a3-f393-e0a9-e50e24dcca9e` otherwise.
    public var description: String {
        if let short { return Self.hex(UInt8(short >> 8)) + Self.hex(UInt8(short & 0xFF)) }
        let digits = wire.reversed().map(Self.hex)
        return [0..<4, 4..<6, 6..<8, 8..<10, 10..<16].map { digits[$0].joined() }.joined(separator: "-")
    }

    private static func hex(_ byte: UInt8) -> String {
        let text = String(byte, radix: 16)
        return byte < 0x10 ? "0" + text : text
    }

    public static let heartRateService = BluetoothUUID(0x180D)
    public static let deviceInformationService = BluetoothUUID(0x180A)
    public static let batteryService = BluetoothUUID(0x180F)
    /// The attribute type of a primary service declaration.
    public static let primaryService = BluetoothUUID(0x2800)
    /// The attribute type of a characteristic declaration.
    public static let characteristicDeclaration = BluetoothUUID(0x2803)
    /// Client Characteristic Configuration: where notifications are switched on.
    public static let clientCharacteristicConfiguration = BluetoothUUID(0x2902)
    public static let heartRateMeasurement = BluetoothUUID(0x2A37)
    public static let bodySensorLocation = BluetoothUUID(0x2A38)
    public static let batteryLevel = BluetoothUUID(0x2A19)
}
