/// btsnoop version 1, the capture format of the Bluetooth host interface that Android
/// (`btsnoop_hci.log`), BlueZ (`btmon -w`) and Wireshark read and write.
///
/// A 16-byte header (`btsnoop\0`, version and datalink as u32 big-endian) is followed by
/// records: original length, included length, flags, cumulative drops (u32 big-endian) and a
/// time (i64 big-endian, microseconds since midnight of 1 January of year 0), then the
/// included bytes. What the flags and bytes mean depends on the datalink.
public enum BTSnoop {
    /// The first eight bytes of every capture.
    public static let magic: [UInt8] = Array("btsnoop".utf8) + [0]
    /// The only version there is.
    public static let version: UInt32 = 1
    /// Bytes of the file header.
    public static let headerLength = 16
    /// Bytes of a record header.
    public static let recordHeaderLength = 24
    /// The largest packet a record may include: an ACL packet of 65,535 payload bytes with
    /// its 4-byte header and an H4 type byte. Anything longer is a corrupt length.
    public static let maximumPacketLength = 1 + 4 + 65_535
    /// The Unix epoch in btsnoop time (microseconds since year 0), as Wireshark's reader has it.
    public static let unixEpoch: Int64 = 0x00DC_DDB3_0F2F_8000

    /// Microseconds since the Unix epoch of a record's time.
    public static func unixMicroseconds(captureTime: Int64) -> Int64 { captureTime &- unixEpoch }

    /// A record's time for microseconds since the Unix epoch.
    public static func captureTime(unixMicroseconds: Int64) -> Int64 { unixMicroseconds &+ unixEpoch }
}

/// The link layer a capture's records carry: the header's datalink field.
public enum BTSnoopDatalink: UInt32, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Unencapsulated HCI ("H1"): no type byte; flags bit 1 marks a command or event, bit 0
    /// the direction.
    case hci = 1001
    /// HCI UART ("H4"), as Android writes: each packet starts with its type byte (1 command,
    /// 2 ACL, 3 SCO, 4 event, 5 ISO); flags bit 0 is set for controller to host.
    case uart = 1002
    /// The Linux monitor channel, as `btmon -w` writes: flags are the controller index << 16
    /// with an opcode below; no type byte.
    case monitor = 2001

    public var description: String {
        switch self {
        case .hci: "1001 (HCI)"
        case .uart: "1002 (HCI UART, H4)"
        case .monitor: "2001 (Linux monitor)"
        }
    }
}

/// Opcodes of the Linux monitor channel (BlueZ's `src/shared/btsnoop.h`): the low 16 bits of
/// a 2001 record's flags, and the kind a packet of the other datalinks is normalised to.
public enum MonitorOpcode {
    public static let newIndex: UInt16 = 0
    public static let deleteIndex: UInt16 = 1
    public static let command: UInt16 = 2
    public static let event: UInt16 = 3
    public static let aclSent: UInt16 = 4
    public static let aclReceived: UInt16 = 5
    public static let scoSent: UInt16 = 6
    public static let scoReceived: UInt16 = 7
    public static let openIndex: UInt16 = 8
    public static let closeIndex: UInt16 = 9
    public static let indexInfo: UInt16 = 10
    public static let vendorDiagnostic: UInt16 = 11
    public static let systemNote: UInt16 = 12
    public static let userLogging: UInt16 = 13
    public static let isoSent: UInt16 = 18
    public static let isoReceived: UInt16 = 19
}

/// One packet of a capture, whatever datalink carried it: HCI packets without their H4 type
/// byte, and the monitor channel's own records.
public enum BTSnoopPacket: Hashable, Sendable {
    /// An HCI command packet (opcode, length, parameters), host to controller.
    case command([UInt8])
    /// An HCI event packet (code, length, parameters), controller to host.
    case event([UInt8])
    /// An ACL data packet the host sent.
    case aclSent([UInt8])
    /// An ACL data packet the host received.
    case aclReceived([UInt8])
    /// Monitor: a controller appeared, with its address and name (`hci0`).
    case controllerAdded(address: BluetoothAddress?, name: String)
    /// Monitor: a controller went away.
    case controllerRemoved
    /// Monitor: a note from the capturing system (`Bluetooth subsystem version 2.22`).
    case note(String)
    /// Anything else (SCO, ISO, the monitor's index, diagnostic and logging records), kept
    /// whole under its monitor opcode.
    case other(opcode: UInt16, [UInt8])

    /// The monitor opcode of this packet.
    public var monitorOpcode: UInt16 {
        switch self {
        case .command: MonitorOpcode.command
        case .event: MonitorOpcode.event
        case .aclSent: MonitorOpcode.aclSent
        case .aclReceived: MonitorOpcode.aclReceived
        case .controllerAdded: MonitorOpcode.newIndex
        case .controllerRemoved: MonitorOpcode.deleteIndex
        case .note: MonitorOpcode.systemNote
        case .other(let opcode, _): opcode
        }
    }
}

/// One record of a capture.
public struct BTSnoopRecord: Hashable, Sendable {
    /// Its place in the capture, from 1 (as Wireshark numbers frames).
    public var number: Int
    /// When it was captured, in microseconds since the Unix epoch.
    public var unixMicroseconds: Int64
    /// The controller index (monitor captures); nil for the datalinks that carry one
    /// controller.
    public var controller: UInt16?
    public var packet: BTSnoopPacket
    /// Bytes of the packet the capturing tool left out (original minus included length);
    /// such a packet is a prefix of what went over the interface.
    public var bytesLeftOut: Int
    /// Packets the capturing tool lost before this one, counted from the start.
    public var cumulativeDrops: UInt32

    public init(
        number: Int, unixMicroseconds: Int64, controller: UInt16? = nil, packet: BTSnoopPacket, bytesLeftOut: Int = 0,
        cumulativeDrops: UInt32 = 0
    ) {
        self.number = number
        self.unixMicroseconds = unixMicroseconds
        self.controller = controller
        self.packet = packet
        self.bytesLeftOut = bytesLeftOut
        self.cumulativeDrops = cumulativeDrops
    }
}
