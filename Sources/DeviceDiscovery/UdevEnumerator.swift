import CUdev
@preconcurrency import Glibc

/// Finds the sensors already plugged in: every tty marked `HRMD_SENSOR`, and every known
/// Dynastream stick even when the rules are not installed.
public struct UdevEnumerator: Sendable {
    public init() {}

    /// The devices present now, in udev's order.
    public func devices() throws(UdevError) -> [HotplugDevice] {
        try records().compactMap(\.hotplugDevice)
    }

    func records() throws(UdevError) -> [UdevDeviceRecord] {
        let context = try UdevContext()
        guard let enumerate = udev_enumerate_new(context.handle) else {
            throw UdevError.lastError("udev_enumerate_new")
        }
        defer { udev_enumerate_unref(enumerate) }
        try UdevError.check(udev_enumerate_add_match_subsystem(enumerate, "tty"), "udev_enumerate_add_match_subsystem")
        // Property matches are alternatives: marked by the rules, or a Dynastream stick.
        try UdevError.check(udev_enumerate_add_match_property(enumerate, "HRMD_SENSOR", "*"), "udev_enumerate_add_match_property")
        try UdevError.check(
            udev_enumerate_add_match_property(enumerate, "ID_VENDOR_ID", ANTStickModel.dynastreamVendorID),
            "udev_enumerate_add_match_property")
        try UdevError.check(udev_enumerate_scan_devices(enumerate), "udev_enumerate_scan_devices")
        return UdevList.entries(udev_enumerate_get_list_entry(enumerate)).compactMap { entry in
            context.device(atSyspath: entry.name)
        }
    }
}
