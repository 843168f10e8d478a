import CUdev
@preconcurrency import Glibc

/// One libudev context. libudev objects are not thread-safe: a context and everything made
/// from it stay with one thread (the enumerator's caller, or the monitor's thread).
final class UdevContext {
    let handle: OpaquePointer

    init() throws(UdevError) {
        errno = 0
        guard let handle = udev_new() else { throw UdevError.lastError("udev_new") }
        self.handle = handle
    }

    /// The device at `syspath`, or nil when it is gone already.
    func device(atSyspath syspath: String) -> UdevDeviceRecord? {
        guard let device = udev_device_new_from_syspath(handle, syspath) else { return nil }
        defer { udev_device_unref(device) }
        return UdevDeviceRecord(device)
    }

    deinit { udev_unref(handle) }
}

/// What libudev says about one device, copied out so no libudev object outlives its thread.
struct UdevDeviceRecord: Sendable, Hashable {
    var syspath: String
    var devnode: String?
    /// `add`, `remove`, `change`, … for a monitor's event; nil for an enumerated device.
    var action: String?
    var properties: [String: String]
    var devlinks: [String]

    init(syspath: String, devnode: String?, action: String?, properties: [String: String], devlinks: [String]) {
        self.syspath = syspath
        self.devnode = devnode
        self.action = action
        self.properties = properties
        self.devlinks = devlinks
    }

    /// Copies `device` (a `struct udev_device *`); the caller keeps its reference.
    init(_ device: OpaquePointer) {
        syspath = udev_device_get_syspath(device).map { String(cString: $0) } ?? ""
        devnode = udev_device_get_devnode(device).map { String(cString: $0) }
        action = udev_device_get_action(device).map { String(cString: $0) }
        properties = Dictionary(UdevList.entries(udev_device_get_properties_list_entry(device)), uniquingKeysWith: { _, last in last })
        devlinks = UdevList.entries(udev_device_get_devlinks_list_entry(device)).map(\.name)
    }

    /// The hrmd device this is, if it is one.
    var hotplugDevice: HotplugDevice? {
        HotplugDevice(syspath: syspath, devnode: devnode, properties: properties, devlinks: devlinks)
    }
}

/// libudev's linked lists (`udev_list_entry_foreach` is a macro Swift cannot see).
enum UdevList {
    static func entries(_ first: OpaquePointer?) -> [(name: String, value: String)] {
        var result: [(name: String, value: String)] = []
        var entry = first
        while let current = entry {
            let name = udev_list_entry_get_name(current).map { String(cString: $0) } ?? ""
            let value = udev_list_entry_get_value(current).map { String(cString: $0) } ?? ""
            result.append((name, value))
            entry = udev_list_entry_get_next(current)
        }
        return result
    }
}
