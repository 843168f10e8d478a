import BluetoothWire

/// The attribute table of a scripted GATT server, built service by service with handles from
/// 0x0001 in order, and the answers a GATT server gives from it (Core spec Vol 3 Part F 3.4,
/// Part G 3): discovery, reads, long reads and writes.
public struct GATTTable: Sendable {
    /// One attribute: its handle, type and value, and the Error Response that a Read or Write
    /// of it gets instead (Insufficient Authentication, say), if any.
    public struct Attribute: Sendable {
        public var handle: UInt16
        public var type: BluetoothUUID
        public var value: [UInt8]
        public var refusal: ATTErrorCode?
    }

    /// A characteristic to declare: a CCCD follows its value when it notifies or indicates.
    public struct Characteristic: Sendable {
        public var uuid: BluetoothUUID
        public var properties: GATTCharacteristicProperties
        public var value: [UInt8]
        public var refusal: ATTErrorCode?
        public var cccdRefusal: ATTErrorCode?

        public init(
            _ uuid: BluetoothUUID, _ properties: GATTCharacteristicProperties, _ value: [UInt8] = [],
            refusal: ATTErrorCode? = nil, cccdRefusal: ATTErrorCode? = nil
        ) {
            self.uuid = uuid
            self.properties = properties
            self.value = value
            self.refusal = refusal
            self.cccdRefusal = cccdRefusal
        }
    }

    /// A primary service to declare.
    public struct Service: Sendable {
        public var uuid: BluetoothUUID
        public var characteristics: [Characteristic]

        public init(_ uuid: BluetoothUUID, _ characteristics: [Characteristic]) {
            self.uuid = uuid
            self.characteristics = characteristics
        }
    }

    public private(set) var attributes: [Attribute] = []

    public init(_ services: [Service]) {
        for service in services {
            add(.primaryService, service.uuid.littleEndian)
            for characteristic in service.characteristics {
                let declaration = nextHandle
                let declared = GATTCharacteristic(
                    declarationHandle: declaration, properties: characteristic.properties, valueHandle: declaration + 1,
                    uuid: characteristic.uuid)
                add(.characteristicDeclaration, declared.declarationValue)
                add(characteristic.uuid, characteristic.value, refusal: characteristic.refusal)
                if !characteristic.properties.isDisjoint(with: [.notify, .indicate]) {
                    add(.clientCharacteristicConfiguration, [0, 0], refusal: characteristic.cccdRefusal)
                }
            }
        }
    }

    private var nextHandle: UInt16 { UInt16(attributes.count + 1) }

    private mutating func add(_ type: BluetoothUUID, _ value: [UInt8], refusal: ATTErrorCode? = nil) {
        attributes.append(Attribute(handle: nextHandle, type: type, value: value, refusal: refusal))
    }

    /// The handle of the first characteristic value of type `uuid`.
    public func valueHandle(of uuid: BluetoothUUID) -> UInt16? {
        attributes.first { $0.type == uuid && $0.handle > 1 && attributes[Int($0.handle) - 2].type == .characteristicDeclaration }?.handle
    }

    /// The handle of the CCCD of the first characteristic of type `uuid`.
    public func cccdHandle(of uuid: BluetoothUUID) -> UInt16? {
        guard let value = valueHandle(of: uuid), Int(value) < attributes.count,
            attributes[Int(value)].type == .clientCharacteristicConfiguration
        else { return nil }
        return value + 1
    }

    public func attribute(_ handle: UInt16) -> Attribute? {
        handle >= 1 && Int(handle) <= attributes.count ? attributes[Int(handle) - 1] : nil
    }

    mutating func store(_ value: [UInt8], at handle: UInt16) {
        guard handle >= 1, Int(handle) <= attributes.count else { return }
        attributes[Int(handle) - 1].value = value
    }

    // MARK: A heart-rate strap

    /// Device Information strings as a Polar strap gives them.
    public static let strapStrings: [(UInt16, String)] = [
        (0x2A29, "Polar Electro Oy"), (0x2A24, "H10"), (0x2A27, "0044"), (0x2A26, "3.1.1"), (0x2A28, "3.1.1 2021-06-02"),
    ]

    /// A 128-bit service UUID (Polar's measurement data service), which discovery passes over.
    public static let vendorService = BluetoothUUID(littleEndian: [
        0xC8, 0xF0, 0x8D, 0x2D, 0xCD, 0x8A, 0xAD, 0x1C, 0x87, 0xF3, 0xE7, 0x02, 0x80, 0x5C, 0x00, 0xFB,
    ])!

    /// The services of a chest strap: GAP (0x1800), Heart Rate (2A37 notify with its CCCD, 2A38),
    /// a vendor service with a 128-bit UUID, Device Information (0x180A) and Battery (2A19 read
    /// and notify, with its CCCD).
    public static func strapServices(
        strings: [(UInt16, String)] = strapStrings, battery: UInt8 = 87, measurement: Characteristic? = nil,
        location: Characteristic? = nil
    ) -> [Service] {
        [
            Service(BluetoothUUID(0x1800), [Characteristic(BluetoothUUID(0x2A00), .read, Array("Polar H10 1234ABCD".utf8))]),
            Service(.heartRateService, [
                measurement ?? Characteristic(.heartRateMeasurement, .notify),
                location ?? Characteristic(.bodySensorLocation, .read, [0x01]),
            ]),
            Service(vendorService, [Characteristic(vendorService, [.read, .write, .indicate])]),
            Service(.deviceInformationService, strings.map { Characteristic(BluetoothUUID($0.0), .read, Array($0.1.utf8)) }),
            Service(.batteryService, [Characteristic(.batteryLevel, [.read, .notify], [battery])]),
        ]
    }
}
