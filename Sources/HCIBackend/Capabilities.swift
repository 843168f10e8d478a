import CBluetooth

/// The Linux capabilities the hci backend needs.
public enum NetworkCapability: Int, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Sending LE commands on a raw HCI socket: scanning, answering connection-parameter
    /// requests. Without it the kernel refuses them (EPERM).
    case netRaw = 13
    /// A trusted HCI socket, which alone sees LE events (advertising reports, connections);
    /// and bringing a down adapter up. Without it the kernel filters those events out silently.
    case netAdmin = 12

    public var description: String {
        switch self {
        case .netRaw: "CAP_NET_RAW"
        case .netAdmin: "CAP_NET_ADMIN"
        }
    }
}

/// A set of capabilities, as capget(2) reports one (bit N is capability N).
public struct CapabilitySet: Sendable, Hashable {
    public var mask: UInt64

    public init(mask: UInt64) {
        self.mask = mask
    }

    /// This process's effective set.
    public static func effective() throws(BluetoothSocketError) -> CapabilitySet {
        var mask: UInt64 = 0
        guard hrmd_effective_capabilities(&mask) == 0 else { throw .last("capget") }
        return CapabilitySet(mask: mask)
    }

    public func contains(_ capability: NetworkCapability) -> Bool {
        mask & (1 << UInt64(capability.rawValue)) != 0
    }

    /// The capabilities of `needed` this set lacks, in the order given.
    public func lacking(_ needed: [NetworkCapability] = NetworkCapability.allCases) -> [NetworkCapability] {
        needed.filter { !contains($0) }
    }
}
