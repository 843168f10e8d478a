/// The advertising data of an LE advertisement or scan response (Core spec Vol 3 Part C 11):
/// length-prefixed structures of a type and its data. What a strap says about itself before
/// anyone connects: its services, its name, its appearance.
public struct AdvertisingData: Hashable, Sendable {
    /// One AD structure: its type (0x09 complete local name, …) and data.
    public struct Structure: Hashable, Sendable {
        public var type: UInt8
        public var data: [UInt8]
        public init(type: UInt8, data: [UInt8]) {
            self.type = type
            self.data = data
        }
    }

    public var structures: [Structure]

    public init(structures: [Structure]) {
        self.structures = structures
    }

    /// Reads the structures; a zero length ends the significant part (the rest is padding).
    public init(decoding bytes: some Collection<UInt8>) throws(BluetoothWireError) {
        var reader = ByteReader(bytes, what: "advertising data")
        var structures: [Structure] = []
        while !reader.isAtEnd {
            let length = Int(try reader.byte())
            if length == 0 { break }
            let body = try reader.take(length)
            structures.append(Structure(type: body[0], data: Array(body.dropFirst())))
        }
        self.structures = structures
    }

    /// The data as advertised.
    public var encoded: [UInt8] {
        structures.flatMap { [UInt8(truncatingIfNeeded: $0.data.count + 1), $0.type] + $0.data }
    }

    /// The service UUIDs listed, complete or not, 16-bit (0x02, 0x03) and 128-bit (0x06, 0x07).
    public var serviceUUIDs: [BluetoothUUID] {
        structures.flatMap { structure -> [BluetoothUUID] in
            let width: Int
            switch structure.type {
            case 0x02, 0x03: width = 2
            case 0x06, 0x07: width = 16
            default: return []
            }
            return stride(from: 0, through: structure.data.count - width, by: width).compactMap {
                BluetoothUUID(littleEndian: structure.data[$0..<$0 + width])
            }
        }
    }

    /// The complete local name (0x09), else the shortened one (0x08).
    public var localName: String? {
        let name = structures.first { $0.type == 0x09 } ?? structures.first { $0.type == 0x08 }
        return name.map { String(decoding: $0.data, as: UTF8.self) }
    }

    /// The appearance (0x19), such as 0x0341 for a heart-rate belt.
    public var appearance: UInt16? {
        guard let data = structures.first(where: { $0.type == 0x19 })?.data, data.count == 2 else { return nil }
        return UInt16(data[0]) | UInt16(data[1]) << 8
    }

    /// Whether the Heart Rate service (0x180D) is among the advertised services.
    public var offersHeartRate: Bool { serviceUUIDs.contains(.heartRateService) }
}

/// One device heard advertising (an entry of an LE Advertising Report or Extended Advertising
/// Report event).
public struct AdvertisingReport: Hashable, Sendable {
    /// The advertising event type (connectable, scan response, …) as the event gives it.
    public var eventType: UInt16
    public var addressType: LEAddressType
    public var address: BluetoothAddress
    public var data: AdvertisingData
    /// Signal strength in dBm, when the controller gave one.
    public var rssi: Int8?

    public init(eventType: UInt16, addressType: LEAddressType, address: BluetoothAddress, data: AdvertisingData, rssi: Int8?) {
        self.eventType = eventType
        self.addressType = addressType
        self.address = address
        self.data = data
        self.rssi = rssi
    }
}
