/// A primary service as Read By Group Type (0x2800) reports it: its handle range and UUID.
public struct GATTService: Hashable, Sendable {
    public var start: UInt16
    public var end: UInt16
    public var uuid: BluetoothUUID

    public init(start: UInt16, end: UInt16, uuid: BluetoothUUID) {
        self.start = start
        self.end = end
        self.uuid = uuid
    }

    /// Reads a Read By Group Type entry whose value is the service UUID (2 or 16 bytes);
    /// nil when the value is no UUID or the range is backwards.
    public init?(_ group: ATTGroupValue) {
        guard let uuid = BluetoothUUID(littleEndian: group.value), group.endGroup >= group.handle else { return nil }
        self.init(start: group.handle, end: group.endGroup, uuid: uuid)
    }
}

/// What a characteristic allows (the properties byte of its declaration).
public struct GATTCharacteristicProperties: OptionSet, Hashable, Sendable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let broadcast = GATTCharacteristicProperties(rawValue: 0x01)
    public static let read = GATTCharacteristicProperties(rawValue: 0x02)
    public static let writeWithoutResponse = GATTCharacteristicProperties(rawValue: 0x04)
    public static let write = GATTCharacteristicProperties(rawValue: 0x08)
    public static let notify = GATTCharacteristicProperties(rawValue: 0x10)
    public static let indicate = GATTCharacteristicProperties(rawValue: 0x20)
}

/// A characteristic declaration (attribute type 0x2803): where its value lives and what it allows.
public struct GATTCharacteristic: Hashable, Sendable {
    /// The declaration's own handle.
    public var declarationHandle: UInt16
    public var properties: GATTCharacteristicProperties
    /// The handle of the value (reads, writes and notifications name it).
    public var valueHandle: UInt16
    public var uuid: BluetoothUUID

    public init(declarationHandle: UInt16, properties: GATTCharacteristicProperties, valueHandle: UInt16, uuid: BluetoothUUID) {
        self.declarationHandle = declarationHandle
        self.properties = properties
        self.valueHandle = valueHandle
        self.uuid = uuid
    }

    /// Reads a Read By Type (0x2803) entry: properties (1), value handle (2), UUID (2 or 16).
    public init?(declaration: ATTHandleValue) {
        let value = declaration.value
        guard value.count == 5 || value.count == 19, let uuid = BluetoothUUID(littleEndian: value[3...]) else { return nil }
        self.init(
            declarationHandle: declaration.handle, properties: GATTCharacteristicProperties(rawValue: value[0]),
            valueHandle: UInt16(value[1]) | UInt16(value[2]) << 8, uuid: uuid)
    }

    /// The declaration's value as Read By Type carries it.
    public var declarationValue: [UInt8] {
        var bytes = [properties.rawValue]
        bytes.appendLittleEndian(valueHandle)
        return bytes + uuid.littleEndian
    }
}
