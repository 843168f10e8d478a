/// Writes a btsnoop version 1 capture in memory, record by record, the way Android (1002) and
/// `btmon -w` (2001) frame theirs, so that Wireshark and `BTSnoopReader` read it back.
public struct BTSnoopWriter: Sendable {
    public let datalink: BTSnoopDatalink
    /// The capture so far: the header, then every record appended.
    public private(set) var bytes: [UInt8]
    /// Records appended so far.
    public private(set) var recordCount = 0

    public init(datalink: BTSnoopDatalink) {
        self.datalink = datalink
        bytes = BTSnoop.magic
        bytes.appendBigEndian(BTSnoop.version)
        bytes.appendBigEndian(datalink.rawValue)
    }

    /// Appends `packet`, captured at `unixMicroseconds` on controller `controller` (written
    /// in monitor captures only). `leftOut` bytes of the original are said to be cut away
    /// (the original length is the included one plus these). Throws when the datalink has no
    /// form for the packet: the monitor's own records outside a monitor capture, SCO and ISO
    /// in an H1 capture (whose flags cannot say so).
    public mutating func append(
        _ packet: BTSnoopPacket, unixMicroseconds: Int64, controller: UInt16 = 0, leftOut: Int = 0, cumulativeDrops: UInt32 = 0
    ) throws(BluetoothWireError) {
        let (flags, data) = try framing(of: packet, controller: controller)
        guard data.count <= BTSnoop.maximumPacketLength else {
            throw .malformed(what: "btsnoop record", reason: "\(data.count) bytes is above the largest HCI packet")
        }
        bytes.appendBigEndian(UInt32(data.count + max(0, leftOut)))
        bytes.appendBigEndian(UInt32(data.count))
        bytes.appendBigEndian(flags)
        bytes.appendBigEndian(cumulativeDrops)
        bytes.appendBigEndian(UInt64(bitPattern: BTSnoop.captureTime(unixMicroseconds: unixMicroseconds)))
        bytes += data
        recordCount += 1
    }

    private func framing(of packet: BTSnoopPacket, controller: UInt16) throws(BluetoothWireError) -> (flags: UInt32, data: [UInt8]) {
        // H1 and H4 flags: bit 0 controller to host, bit 1 command or event.
        let direction: (flags: UInt32, h4Type: UInt8)?
        switch packet {
        case .command: direction = (0b10, 1)
        case .event: direction = (0b11, 4)
        case .aclSent: direction = (0b00, 2)
        case .aclReceived: direction = (0b01, 2)
        case .other(let opcode, _) where datalink == .uart:
            switch opcode {
            case MonitorOpcode.scoSent: direction = (0, 3)
            case MonitorOpcode.scoReceived: direction = (1, 3)
            case MonitorOpcode.isoSent: direction = (0, 5)
            case MonitorOpcode.isoReceived: direction = (1, 5)
            default: direction = nil
            }
        default: direction = nil
        }
        let payload = Self.payload(of: packet)
        switch datalink {
        case .monitor:
            return (UInt32(controller) << 16 | UInt32(packet.monitorOpcode), payload)
        case .uart:
            guard let direction else { throw Self.noForm(packet, in: datalink) }
            return (direction.flags, [direction.h4Type] + payload)
        case .hci:
            guard let direction else { throw Self.noForm(packet, in: datalink) }
            return (direction.flags, payload)
        }
    }

    private static func payload(of packet: BTSnoopPacket) -> [UInt8] {
        switch packet {
        case .command(let bytes), .event(let bytes), .aclSent(let bytes), .aclReceived(let bytes), .other(_, let bytes): bytes
        case .controllerAdded(let address, let name):
            // type 0 (primary), bus 0 (virtual), address least significant first, name in 8 bytes
            [0, 0] + (address?.littleEndian ?? [UInt8](repeating: 0, count: 6))
                + Array(Array(name.utf8).prefix(8)) + [UInt8](repeating: 0, count: max(0, 8 - name.utf8.count))
        case .controllerRemoved: []
        case .note(let text): Array(text.utf8) + [0]
        }
    }

    private static func noForm(_ packet: BTSnoopPacket, in datalink: BTSnoopDatalink) -> BluetoothWireError {
        .malformed(what: "btsnoop record", reason: "datalink \(datalink) has no form for monitor opcode \(packet.monitorOpcode)")
    }
}
