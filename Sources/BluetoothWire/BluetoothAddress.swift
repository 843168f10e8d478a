/// A Bluetooth device address (BD_ADDR), printed most significant byte first as
/// `AA:BB:CC:DD:EE:FF` — the way BlueZ, btmon and the trace format write it — and carried
/// least significant byte first in HCI packets and in `bdaddr_t`.
public struct BluetoothAddress: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The six bytes, most significant first (as printed).
    public let bytes: [UInt8]

    /// Takes six bytes, most significant first.
    public init?(bytes: [UInt8]) {
        guard bytes.count == 6 else { return nil }
        self.bytes = bytes
    }

    /// Reads six bytes in the order HCI and `bdaddr_t` carry them (least significant first).
    public init?(littleEndian wire: some Collection<UInt8>) {
        guard wire.count == 6 else { return nil }
        self.bytes = wire.reversed()
    }

    /// Parses `AA:BB:CC:DD:EE:FF` (either case).
    public init?(_ text: some StringProtocol) {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 6 else { return nil }
        var bytes: [UInt8] = []
        for part in parts {
            guard part.count == 2, let byte = UInt8(part, radix: 16) else { return nil }
            bytes.append(byte)
        }
        self.bytes = bytes
    }

    /// The bytes least significant first, as HCI packets and `bdaddr_t` carry them.
    public var littleEndian: [UInt8] { bytes.reversed() }

    public var description: String {
        bytes.map { byte in
            let hex = String(byte, radix: 16, uppercase: true)
            return byte < 0x10 ? "0" + hex : hex
        }.joined(separator: ":")
    }

    public static func < (lhs: BluetoothAddress, rhs: BluetoothAddress) -> Bool { lhs.bytes.lexicographicallyPrecedes(rhs.bytes) }
}

/// The kind of an LE device address, as HCI events report it (0 public, 1 random); a socket
/// address wants the `BDADDR_LE_*` numbering instead (`socketAddressType`).
public enum LEAddressType: UInt8, Sendable, Hashable, CustomStringConvertible {
    case `public` = 0
    case random = 1

    /// Reads an HCI address-type byte: 0 and 2 (public identity) are public, 1 and 3 random.
    public init?(hci byte: UInt8) {
        switch byte {
        case 0, 2: self = .public
        case 1, 3: self = .random
        default: return nil
        }
    }

    /// `BDADDR_LE_PUBLIC` (1) or `BDADDR_LE_RANDOM` (2), for `sockaddr_l2.l2_bdaddr_type`.
    public var socketAddressType: UInt8 { self == .public ? 1 : 2 }

    public var description: String { self == .public ? "public" : "random" }
}
