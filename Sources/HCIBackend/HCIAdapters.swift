import BluetoothWire
import CBluetooth
@preconcurrency import Glibc

/// Which adapter an `hci` backend drives: `hci` takes the first one up (or, when none is,
/// the first the kernel lists); `hci:hciN` takes that one.
public enum AdapterChoice: Sendable, Hashable, CustomStringConvertible {
    case first
    case index(UInt16)

    public var description: String {
        switch self {
        case .first: "the first adapter"
        case .index(let index): "hci\(index)"
        }
    }
}

/// An adapter as the kernel describes it (`hci_devinfo`).
public struct AdapterInfo: Sendable, Hashable {
    /// N of hciN.
    public var index: UInt16
    public var address: BluetoothAddress
    /// Whether it is powered up (HCI_UP).
    public var isUp: Bool

    public init(index: UInt16, address: BluetoothAddress, isUp: Bool) {
        self.index = index
        self.address = address
        self.isUp = isUp
    }

    public var name: String { "hci\(index)" }
}

/// The kernel's Bluetooth adapters, through libbluetooth and the HCI ioctls of a raw HCI
/// socket. Every call fails with EAFNOSUPPORT when the kernel has no Bluetooth.
public enum HCIAdapters {
    /// Whether the kernel has Bluetooth at all (its sysfs class exists), to tell a kernel
    /// without Bluetooth from a process that may not open AF_BLUETOOTH sockets: both see
    /// EAFNOSUPPORT.
    public static var kernelHasBluetooth: Bool { access("/sys/class/bluetooth", F_OK) == 0 }

    /// Opens and closes a raw HCI socket: EAFNOSUPPORT when there are no Bluetooth sockets.
    public static func checkSockets() throws(BluetoothSocketError) {
        try withControlSocket { _ throws(BluetoothSocketError) in }
    }

    /// The first adapter that is up (`hci_get_route`); ENODEV when none is.
    public static func firstUp() throws(BluetoothSocketError) -> UInt16 {
        let index = hci_get_route(nil)
        guard index >= 0 else { throw .last("hci_get_route") }
        return UInt16(index)
    }

    /// Every adapter the kernel knows, up or down, by index (HCIGETDEVLIST).
    public static func all() throws(BluetoothSocketError) -> [UInt16] {
        try withControlSocket { control throws(BluetoothSocketError) in
            var indices = [UInt16](repeating: 0, count: Int(HCI_MAX_DEV))
            let count = hrmd_hci_device_ids(control, &indices)
            guard count >= 0 else { throw .last("ioctl(HCIGETDEVLIST)") }
            return Array(indices.prefix(Int(count)))
        }
    }

    /// What the kernel says of adapter `index` (`hci_devinfo`): ENODEV when there is none.
    public static func info(_ index: UInt16) throws(BluetoothSocketError) -> AdapterInfo {
        var info = hci_dev_info()
        guard hci_devinfo(Int32(index), &info) == 0 else { throw .last("hci_devinfo(hci\(index))") }
        guard let address = BluetoothAddress(littleEndian: withUnsafeBytes(of: info.bdaddr.b) { Array($0) }) else {
            throw BluetoothSocketError(call: "hci_devinfo(hci\(index))", errno: EIO)  // bdaddr_t is six bytes: never
        }
        return AdapterInfo(index: index, address: address, isUp: hci_test_bit(Int32(HCI_UP), &info.flags) != 0)
    }

    /// Powers adapter `index` up (HCIDEVUP), as bluetoothd would: without bluetoothd nothing
    /// else does, and the kernel powers a new adapter down again soon after it appears. Already
    /// up is success; ERFKILL means rfkill blocks it; EPERM, that CAP_NET_ADMIN is missing.
    public static func bringUp(_ index: UInt16) throws(BluetoothSocketError) {
        try withControlSocket { control throws(BluetoothSocketError) in
            if hrmd_hci_device_up(control, Int32(index)) < 0 && errno != EALREADY { throw .last("ioctl(HCIDEVUP, hci\(index))") }
        }
    }

    private static func withControlSocket<T>(_ body: (Int32) throws(BluetoothSocketError) -> T) throws(BluetoothSocketError) -> T {
        let control = socket(AF_BLUETOOTH, Int32(SOCK_RAW.rawValue) | Int32(SOCK_CLOEXEC.rawValue), BTPROTO_HCI)
        guard control >= 0 else { throw .last("socket(AF_BLUETOOTH)") }
        defer { close(control) }
        return try body(control)
    }
}
