@preconcurrency import Glibc
import SensorFrames

/// Why the hci backend cannot work now, in words a person can act on. Each is a `waiting`
/// state that the backend waits out, retrying with backoff; none stops hrmd.
public enum HCIProblem: Error, Sendable, Hashable, CustomStringConvertible {
    /// `socket(AF_BLUETOOTH)` failed with EAFNOSUPPORT: the kernel has no Bluetooth, or it has
    /// (its sysfs class exists) and this process may not use the address family (systemd's
    /// `RestrictAddressFamilies=`, or a network namespace other than the host's: Bluetooth
    /// sockets exist only in that one).
    case noBluetooth(kernelHasBluetooth: Bool)
    /// No adapter (or not the one named).
    case noAdapter(AdapterChoice)
    /// The adapter is down and could not be brought up (`because`, when hrmd tried).
    case adapterDown(adapter: String, because: String?)
    /// rfkill blocks the adapter.
    case blockedByRfkill(adapter: String)
    /// Another program holds the adapter exclusively (an HCI user channel).
    case adapterBusy(adapter: String)
    /// The adapter was removed while in use.
    case adapterGone(adapter: String)
    /// The process lacks capabilities the backend needs.
    case missingCapabilities([NetworkCapability])
    /// Anything else, as the call said it.
    case failed(BluetoothSocketError)

    /// What made a call fail, beyond its errno: whether the kernel has Bluetooth, and which
    /// needed capabilities the process lacks.
    public struct Circumstances: Sendable, Hashable {
        public var kernelHasBluetooth: Bool
        public var lacking: [NetworkCapability]

        public init(kernelHasBluetooth: Bool, lacking: [NetworkCapability]) {
            self.kernelHasBluetooth = kernelHasBluetooth
            self.lacking = lacking
        }

        /// This machine's and this process's.
        public static var current: Circumstances {
            Circumstances(
                kernelHasBluetooth: HCIAdapters.kernelHasBluetooth,
                lacking: (try? CapabilitySet.effective().lacking()) ?? [])
        }
    }

    /// What a failed call on `adapter` means.
    public init(_ error: BluetoothSocketError, adapter: AdapterChoice, _ circumstances: Circumstances) {
        let name = adapter.description
        switch error.errno {
        case EAFNOSUPPORT: self = .noBluetooth(kernelHasBluetooth: circumstances.kernelHasBluetooth)
        case ENODEV: self = .noAdapter(adapter)
        case ENETDOWN: self = .adapterDown(adapter: name, because: nil)
        case ERFKILL: self = .blockedByRfkill(adapter: name)
        case EBUSY: self = .adapterBusy(adapter: name)
        case EPIPE: self = .adapterGone(adapter: name)
        case EPERM where !circumstances.lacking.isEmpty, EACCES where !circumstances.lacking.isEmpty:
            self = .missingCapabilities(circumstances.lacking)
        default: self = .failed(error)
        }
    }

    /// The backend's state while the problem lasts.
    public var state: SensorState { .waiting(reason: description) }

    public var description: String {
        switch self {
        case .noBluetooth(kernelHasBluetooth: false):
            "the kernel has no Bluetooth support (socket(AF_BLUETOOTH): EAFNOSUPPORT)"
        case .noBluetooth(kernelHasBluetooth: true):
            "hrmd may not open Bluetooth sockets (socket(AF_BLUETOOTH): EAFNOSUPPORT): the service needs"
                + " AF_BLUETOOTH in RestrictAddressFamilies= (install the hci drop-in), and a container the host's network namespace"
        case .noAdapter(.first): "no Bluetooth adapter"
        case .noAdapter(let adapter): "no Bluetooth adapter \(adapter)"
        case .adapterDown(let adapter, nil): "\(adapter) is down"
        case .adapterDown(let adapter, let because?): "\(adapter) is down and hrmd cannot bring it up (\(because))"
        case .blockedByRfkill(let adapter): "\(adapter) is blocked by rfkill (rfkill unblock bluetooth)"
        case .adapterBusy(let adapter): "\(adapter) is busy: another program holds it exclusively"
        case .adapterGone(let adapter): "\(adapter) went away"
        case .missingCapabilities(let lacking):
            "hrmd lacks \(lacking.map(\.description).joined(separator: " and ")), which hci needs"
                + " (install the hci drop-in, or setcap cap_net_raw,cap_net_admin+ep on hrmd)"
        case .failed(let error): "\(error)"
        }
    }
}
