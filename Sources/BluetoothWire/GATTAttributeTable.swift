/// The attributes of one GATT server as far as a client's discovery has shown them: services,
/// characteristic declarations, and the types of single handles (Find Information, or a Read
/// By Type of a characteristic UUID).
public struct GATTAttributeTable: Sendable, Hashable {
    /// Services by start handle.
    public private(set) var services: [UInt16: GATTService] = [:]
    /// Characteristics by value handle.
    public private(set) var characteristics: [UInt16: GATTCharacteristic] = [:]
    /// Attribute types by handle, where discovery named them one by one.
    public private(set) var attributeTypes: [UInt16: BluetoothUUID] = [:]

    public init() {}

    /// Whether discovery has shown anything of this server.
    public var isEmpty: Bool { services.isEmpty && characteristics.isEmpty && attributeTypes.isEmpty }

    /// The UUID of the characteristic whose value lives at `handle`, when discovery showed it.
    public func characteristicUUID(at handle: UInt16) -> BluetoothUUID? {
        if let characteristic = characteristics[handle] { return characteristic.uuid }
        guard let type = attributeTypes[handle], !Self.isGATTDeclarationOrDescriptor(type) else { return nil }
        return type
    }

    /// The value handles of the characteristics of type `uuid`, lowest first.
    public func valueHandles(of uuid: BluetoothUUID) -> [UInt16] {
        var handles = Set(characteristics.values.filter { $0.uuid == uuid }.map(\.valueHandle))
        for (handle, type) in attributeTypes where type == uuid { handles.insert(handle) }
        return handles.sorted()
    }

    mutating func add(_ service: GATTService) { services[service.start] = service }

    mutating func add(_ characteristic: GATTCharacteristic) {
        characteristics[characteristic.valueHandle] = characteristic
        attributeTypes[characteristic.declarationHandle] = .characteristicDeclaration
    }

    mutating func setType(_ uuid: BluetoothUUID, at handle: UInt16) { attributeTypes[handle] = uuid }

    /// GATT's own attribute types (0x2800–0x28FF declarations, 0x2900–0x29FF descriptors):
    /// a handle of one of these types holds no characteristic value.
    static func isGATTDeclarationOrDescriptor(_ uuid: BluetoothUUID) -> Bool {
        guard let short = uuid.short else { return false }
        return (0x2800...0x29FF).contains(short)
    }
}
