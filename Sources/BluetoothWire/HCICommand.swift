/// An HCI command packet (Core spec Vol 4 Part E 5.4.1) without the H4 type byte: the opcode
/// (OGF << 10 | OCF) and its parameters.
public struct HCICommand: Hashable, Sendable {
    public var opcode: UInt16
    public var parameters: [UInt8]

    public init(opcode: UInt16, parameters: [UInt8]) {
        self.opcode = opcode
        self.parameters = parameters
    }

    public init(ogf: UInt16, ocf: UInt16, parameters: [UInt8]) {
        self.init(opcode: ogf << 10 | ocf & 0x03FF, parameters: parameters)
    }

    /// Reads a command packet: opcode, parameter length, parameters.
    public init(decoding packet: some Collection<UInt8>) throws(BluetoothWireError) {
        var reader = ByteReader(packet, what: "HCI command")
        let opcode = try reader.uint16()
        let parameters = try reader.take(Int(try reader.byte()))
        guard reader.isAtEnd else { throw .malformed(what: "HCI command", reason: "\(reader.remaining) bytes after its parameters") }
        self.init(opcode: opcode, parameters: parameters)
    }

    /// The opcode group (0x08 for LE controller commands).
    public var ogf: UInt16 { opcode >> 10 }
    /// The command within its group.
    public var ocf: UInt16 { opcode & 0x03FF }

    /// The command as sent: opcode, parameter length, parameters.
    public var encoded: [UInt8] {
        var bytes: [UInt8] = []
        bytes.appendLittleEndian(opcode)
        bytes.append(UInt8(truncatingIfNeeded: parameters.count))
        return bytes + parameters
    }

    static let leGroup: UInt16 = 0x08

    /// LE Set Scan Parameters: active scanning asks for scan responses (where straps put
    /// their names); interval and window in units of 0.625 ms.
    public static func leSetScanParameters(
        active: Bool, interval: UInt16, window: UInt16, ownAddressType: UInt8 = 0, filterPolicy: UInt8 = 0
    ) -> HCICommand {
        var parameters: [UInt8] = [active ? 1 : 0]
        parameters.appendLittleEndian(interval)
        parameters.appendLittleEndian(window)
        parameters += [ownAddressType, filterPolicy]
        return HCICommand(ogf: leGroup, ocf: 0x000B, parameters: parameters)
    }

    /// Disconnect (Link Control): ends the link `handle` with an HCI reason (0x13: the user
    /// ended the connection).
    public static func disconnect(handle: UInt16, reason: UInt8 = 0x13) -> HCICommand {
        var parameters: [UInt8] = []
        parameters.appendLittleEndian(handle)
        parameters.append(reason)
        return HCICommand(ogf: 0x01, ocf: 0x0006, parameters: parameters)
    }

    /// LE Set Scan Enable.
    public static func leSetScanEnable(_ enable: Bool, filterDuplicates: Bool) -> HCICommand {
        HCICommand(ogf: leGroup, ocf: 0x000C, parameters: [enable ? 1 : 0, filterDuplicates ? 1 : 0])
    }

    /// LE Remote Connection Parameter Request Reply: accepts a peripheral's request. The
    /// minimum and maximum connection-event lengths are 0 (the controller chooses).
    public static func leRemoteConnectionParameterRequestReply(handle: UInt16, _ parameters: ConnectionParameters) -> HCICommand {
        var bytes: [UInt8] = []
        bytes.appendLittleEndian(handle)
        bytes += parameters.encoded
        bytes += [0, 0, 0, 0]
        return HCICommand(ogf: leGroup, ocf: 0x0020, parameters: bytes)
    }

    /// LE Remote Connection Parameter Request Negative Reply: refuses it with an HCI reason.
    public static func leRemoteConnectionParameterRequestNegativeReply(handle: UInt16, reason: UInt8) -> HCICommand {
        var parameters: [UInt8] = []
        parameters.appendLittleEndian(handle)
        parameters.append(reason)
        return HCICommand(ogf: leGroup, ocf: 0x0021, parameters: parameters)
    }
}

/// How hrmd answers a strap that asks for new connection parameters: whatever the spec allows
/// is accepted as asked (a strap that is refused drops the link about 30 s later, which is the
/// drop Linux users of Polar straps know); only parameters the spec forbids are refused, with
/// Unacceptable Connection Parameters (0x3B).
public enum ConnectionParameterAnswer {
    /// The HCI error code for a refusal.
    public static let unacceptableConnectionParameters: UInt8 = 0x3B

    /// The command that answers the request of connection `handle` for `requested`.
    public static func command(answering handle: UInt16, requested: ConnectionParameters) -> HCICommand {
        requested.isValid
            ? .leRemoteConnectionParameterRequestReply(handle: handle, requested)
            : .leRemoteConnectionParameterRequestNegativeReply(handle: handle, reason: unacceptableConnectionParameters)
    }
}
