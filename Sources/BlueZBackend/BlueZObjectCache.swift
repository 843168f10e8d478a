import SDBus

/// BlueZ's D-Bus names.
public enum BlueZ {
    public static let service = "org.bluez"
    public static let adapterInterface = "org.bluez.Adapter1"
    public static let deviceInterface = "org.bluez.Device1"
    public static let batteryInterface = "org.bluez.Battery1"
    public static let serviceInterface = "org.bluez.GattService1"
    public static let characteristicInterface = "org.bluez.GattCharacteristic1"
    public static let objectManager = "org.freedesktop.DBus.ObjectManager"
    public static let properties = "org.freedesktop.DBus.Properties"
    /// The Heart Rate service.
    public static let heartRateService = "0000180d-0000-1000-8000-00805f9b34fb"

    /// The full 128-bit UUID of a 16-bit Bluetooth SIG UUID.
    public static func uuid(_ short: UInt16) -> String {
        let hex = String(short, radix: 16)
        return "0000" + String(repeating: "0", count: 4 - hex.count) + hex + "-0000-1000-8000-00805f9b34fb"
    }
}

/// What changed in the object tree after one signal.
public enum BlueZChange: Sendable, Hashable {
    case interfacesAdded(path: String, interfaces: [String])
    case interfacesRemoved(path: String, interfaces: [String])
    case propertiesChanged(path: String, interface: String, changed: [String: DBusValue])

    /// The object the change is about.
    public var path: String {
        switch self {
        case .interfacesAdded(let path, _), .interfacesRemoved(let path, _), .propertiesChanged(let path, _, _): path
        }
    }

    /// Whether the change is about the device object named `deviceComponent` (`dev_AA_BB_…`)
    /// or an object below it, or about an object above devices (the root, an adapter): what
    /// one strap's connection needs to hear.
    public func concerns(deviceComponent: String) -> Bool {
        // Object paths are ASCII: /org/bluez/hci0/dev_AA_BB_CC_DD_EE_FF/service000a/char000b.
        for component in path.utf8.split(separator: UInt8(ascii: "/")) where component.starts(with: "dev_".utf8) {
            return component.elementsEqual(deviceComponent.utf8)
        }
        return true
    }

    /// The Device1 properties the supervisor decides on (not RSSI, ManufacturerData, …).
    private static let supervisedDeviceProperties: Set<String> = ["Trusted", "Paired", "UUIDs", "Connected", "Address"]

    /// Whether the change can alter which straps exist, are admitted or are connected, or
    /// whether an adapter can discover: what the supervisor decides on. Notifications,
    /// signal strengths and GATT objects are not.
    public var concernsSupervisor: Bool {
        switch self {
        case .interfacesAdded(_, let interfaces), .interfacesRemoved(_, let interfaces):
            interfaces.contains(BlueZ.deviceInterface) || interfaces.contains(BlueZ.adapterInterface)
        case .propertiesChanged(_, BlueZ.adapterInterface, _):
            true
        case .propertiesChanged(_, BlueZ.deviceInterface, let changed):
            changed.keys.contains { Self.supervisedDeviceProperties.contains($0) }
        case .propertiesChanged:
            false
        }
    }
}

/// bluetoothd's object tree as last seen: every object's interfaces and their properties,
/// kept current by applying `GetManagedObjects` once and then the ObjectManager and
/// Properties signals. A plain value: no bus, so it is tested by feeding it signals.
public struct BlueZObjectCache: Sendable, Hashable {
    /// path → interface → property → value.
    public private(set) var objects: [String: [String: [String: DBusValue]]] = [:]

    public init() {}

    /// Replaces the cache with a `GetManagedObjects` reply (`a{oa{sa{sv}}}`).
    public mutating func load(managedObjects reply: DBusValue) {
        objects = [:]
        for (path, interfaces) in reply.stringKeyed ?? [:] {
            objects[path] = Self.interfaces(interfaces)
        }
    }

    /// Applies an InterfacesAdded, InterfacesRemoved or PropertiesChanged signal; returns what
    /// changed, or nil for a signal that changes nothing here.
    @discardableResult
    public mutating func apply(_ signal: DBusSignal) -> BlueZChange? {
        let arguments = signal.arguments
        switch signal.member {
        case "InterfacesAdded":
            guard arguments.count >= 2, let path = arguments[0].string else { return nil }
            let added = Self.interfaces(arguments[1])
            objects[path, default: [:]].merge(added) { _, new in new }
            return .interfacesAdded(path: path, interfaces: added.keys.sorted())
        case "InterfacesRemoved":
            guard arguments.count >= 2, let path = arguments[0].string, let removed = arguments[1].strings else { return nil }
            for interface in removed { objects[path]?[interface] = nil }
            if objects[path]?.isEmpty == true { objects[path] = nil }
            return .interfacesRemoved(path: path, interfaces: removed)
        case "PropertiesChanged":
            guard arguments.count >= 2, let interface = arguments[0].string, let changed = arguments[1].stringKeyed else { return nil }
            let path = signal.path
            guard objects[path]?[interface] != nil else { return nil }  // an object we never saw added
            let values = changed.mapValues(\.unwrapped)
            objects[path]?[interface]?.merge(values) { _, new in new }
            for name in (arguments.count > 2 ? arguments[2].strings ?? [] : []) { objects[path]?[interface]?[name] = nil }
            return .propertiesChanged(path: path, interface: interface, changed: values)
        default:
            return nil
        }
    }

    private static func interfaces(_ value: DBusValue) -> [String: [String: DBusValue]] {
        (value.stringKeyed ?? [:]).mapValues { ($0.stringKeyed ?? [:]).mapValues(\.unwrapped) }
    }

    // MARK: Views

    public var adapters: [Adapter] {
        objects.compactMap { path, interfaces in interfaces[BlueZ.adapterInterface].map { Adapter(path: path, properties: $0) } }
            .sorted { $0.path < $1.path }
    }

    public var devices: [Device] {
        objects.compactMap { path, interfaces in
            interfaces[BlueZ.deviceInterface].map { Device(path: path, properties: $0, battery: interfaces[BlueZ.batteryInterface]) }
        }
        .sorted { $0.path < $1.path }
    }

    /// The device with this address (`AA:BB:CC:DD:EE:FF`, any case), on any adapter.
    public func device(address: String) -> Device? {
        let wanted = address.uppercased()
        return devices.first { $0.address == wanted }
    }

    public func device(path: String) -> Device? {
        objects[path]?[BlueZ.deviceInterface].map { Device(path: path, properties: $0, battery: objects[path]?[BlueZ.batteryInterface]) }
    }

    public func adapter(path: String) -> Adapter? {
        objects[path]?[BlueZ.adapterInterface].map { Adapter(path: path, properties: $0) }
    }

    /// The characteristic with this UUID below a device (in any of its services).
    public func characteristic(_ uuid: String, of devicePath: String) -> Characteristic? {
        let prefix = devicePath + "/"
        return objects
            .compactMap { path, interfaces -> Characteristic? in
                guard path.hasPrefix(prefix), let properties = interfaces[BlueZ.characteristicInterface] else { return nil }
                let characteristic = Characteristic(path: path, properties: properties)
                return characteristic.uuid == uuid.lowercased() ? characteristic : nil
            }
            .min { $0.path < $1.path }
    }

    /// Whether an object exists at `path`.
    public func contains(path: String) -> Bool { objects[path] != nil }
}

/// An `org.bluez.Adapter1`.
public struct Adapter: Sendable, Hashable {
    public var path: String
    public var address: String
    public var powered: Bool
    public var discovering: Bool

    init(path: String, properties: [String: DBusValue]) {
        self.path = path
        address = properties["Address"]?.string ?? ""
        powered = properties["Powered"]?.bool ?? false
        discovering = properties["Discovering"]?.bool ?? false
    }
}

/// An `org.bluez.Device1` (with its `Battery1`, when it has one).
public struct Device: Sendable, Hashable {
    public var path: String
    public var address: String
    public var adapterPath: String
    public var name: String?
    public var uuids: [String]
    public var trusted: Bool
    public var paired: Bool
    /// `Connected`, or `ServicesResolved`: bluetoothd sets that only on a connected device and
    /// clears it first when the link ends, while its `Connected` can stay unannounced. 5.66
    /// marks an LE link connected when its ATT channel comes up; when the kernel's Device
    /// Connected event is handled after that, bluetoothd logs "Device … is already connected"
    /// and never sends `Connected: true`, though the link is up and its services resolve.
    public var connected: Bool
    public var servicesResolved: Bool
    public var batteryPercentage: UInt8?

    init(path: String, properties: [String: DBusValue], battery: [String: DBusValue]?) {
        self.path = path
        address = (properties["Address"]?.string ?? "").uppercased()
        adapterPath = properties["Adapter"]?.string ?? String(path.split(separator: "/").dropLast().joined(separator: "/")).withLeadingSlash
        name = properties["Name"]?.string ?? properties["Alias"]?.string
        uuids = (properties["UUIDs"]?.strings ?? []).map { $0.lowercased() }
        trusted = properties["Trusted"]?.bool ?? false
        paired = properties["Paired"]?.bool ?? false
        servicesResolved = properties["ServicesResolved"]?.bool ?? false
        connected = properties["Connected"]?.bool ?? false || servicesResolved
        batteryPercentage = battery?["Percentage"]?.integer.flatMap { UInt8(exactly: $0) }
    }

    /// Whether the device advertises (or has) the Heart Rate service.
    public var isHeartRateStrap: Bool { uuids.contains(BlueZ.heartRateService) }
}

/// An `org.bluez.GattCharacteristic1`.
public struct Characteristic: Sendable, Hashable {
    public var path: String
    public var uuid: String
    public var flags: [String]
    /// Present (true or false) when bluetoothd offers `AcquireNotify` for this characteristic.
    public var notifyAcquired: Bool?
    public var notifying: Bool

    init(path: String, properties: [String: DBusValue]) {
        self.path = path
        uuid = (properties["UUID"]?.string ?? "").lowercased()
        flags = properties["Flags"]?.strings ?? []
        notifyAcquired = properties["NotifyAcquired"]?.bool
        notifying = properties["Notifying"]?.bool ?? false
    }

    /// Whether notifications can be taken as a socket (`AcquireNotify`).
    public var supportsAcquireNotify: Bool { notifyAcquired != nil || flags.contains("notify-acquired") }
}

private extension String {
    var withLeadingSlash: String { hasPrefix("/") ? self : "/" + self }
}
