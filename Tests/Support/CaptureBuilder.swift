import BluetoothWire

/// Builds btsnoop captures of the host interface packet by packet, with the framing a real
/// controller and host give them: HCI events and commands laid out byte by byte from the Core
/// specification (not through the decoders under test), ATT PDUs in L2CAP frames cut into
/// ACL packets of at most `aclPayload` bytes (the host's first fragments not flushable, the
/// controller's flushable), and a clock that moves a little with every packet.
public struct CaptureBuilder {
    public private(set) var writer: BTSnoopWriter
    /// The time of the next packet, in microseconds since the Unix epoch.
    public var clock: Int64
    /// The controller index written in monitor captures.
    public var controller: UInt16 = 0
    /// The largest ACL payload (27 is the LE default data length).
    public var aclPayload = 27
    /// Microseconds between consecutive packets.
    public var step: Int64 = 1_250

    public init(datalink: BTSnoopDatalink, start: Int64) {
        writer = BTSnoopWriter(datalink: datalink)
        clock = start
    }

    /// The capture so far.
    public var bytes: [UInt8] { writer.bytes }
    /// Records written so far (the number of the last one).
    public var recordCount: Int { writer.recordCount }

    /// Appends `packet` at the clock, then moves the clock on.
    public mutating func record(_ packet: BTSnoopPacket, leftOut: Int = 0) {
        do {
            try writer.append(packet, unixMicroseconds: clock, controller: controller, leftOut: leftOut)
        } catch {
            fatalError("the capture builder asked for a record its datalink cannot carry: \(error)")
        }
        clock += step
    }

    /// Moves the clock on by `microseconds`.
    public mutating func wait(_ microseconds: Int64) { clock += microseconds }

    // MARK: HCI commands and events

    public mutating func command(_ opcode: UInt16, _ parameters: [UInt8]) {
        record(.command(le16(opcode) + [UInt8(parameters.count)] + parameters))
    }

    public mutating func event(_ code: UInt8, _ parameters: [UInt8]) {
        record(.event([code, UInt8(parameters.count)] + parameters))
    }

    public mutating func commandComplete(_ opcode: UInt16, _ returned: [UInt8] = [0]) {
        event(0x0E, [1] + le16(opcode) + returned)
    }

    public mutating func commandStatus(_ opcode: UInt16, status: UInt8 = 0) {
        event(0x0F, [status, 1] + le16(opcode))
    }

    /// LE Set Scan Enable, and its Command Complete.
    public mutating func scan(_ enable: Bool) {
        command(0x200C, [enable ? 1 : 0, 1])
        commandComplete(0x200C)
    }

    /// An LE Advertising Report of `address` with the flags, the Heart Rate service and a name.
    public mutating func advertisement(from address: BluetoothAddress, name: String, random: Bool = false) {
        let data: [UInt8] = [2, 0x01, 0x06, 3, 0x03, 0x0D, 0x18] + [UInt8(name.utf8.count + 1), 0x09] + Array(name.utf8)
        event(0x3E, [0x02, 1, 0x00, random ? 1 : 0] + address.littleEndian + [UInt8(data.count)] + data + [0xC4])
    }

    /// LE Create Connection to `address` and its Command Status.
    public mutating func createConnection(to address: BluetoothAddress, random: Bool = false) {
        let parameters = le16(0x0060) + le16(0x0030) + [0, random ? 1 : 0] + address.littleEndian + [0]
            + le16(0x0018) + le16(0x0028) + le16(0) + le16(0x01F4) + le16(0) + le16(0)
        command(0x200D, parameters)
        commandStatus(0x200D)
    }

    /// LE Connection Complete (subevent 0x01), or Enhanced Connection Complete (0x0A) with
    /// zero resolvable private addresses; returns its time.
    @discardableResult
    public mutating func connectionComplete(
        handle: UInt16, peer: BluetoothAddress, random: Bool = false, enhanced: Bool = false, status: UInt8 = 0
    ) -> Int64 {
        var parameters: [UInt8] = [enhanced ? 0x0A : 0x01, status] + le16(handle) + [0x00, random ? 1 : 0] + peer.littleEndian
        if enhanced { parameters += [UInt8](repeating: 0, count: 12) }
        parameters += le16(0x0018) + le16(0) + le16(0x01F4) + [0x00]
        let time = clock
        event(0x3E, parameters)
        return time
    }

    public mutating func disconnectionComplete(handle: UInt16, reason: UInt8 = 0x13) {
        event(0x05, [0] + le16(handle) + [reason])
    }

    /// Number of Completed Packets for `count` packets of `handle`.
    public mutating func completedPackets(handle: UInt16, count: UInt16 = 1) {
        event(0x13, [1] + le16(handle) + le16(count))
    }

    // MARK: ATT over ACL

    /// Sends `pdu` on `handle` (host to controller), cut into ACL packets.
    public mutating func send(_ pdu: ATTPDU, on handle: UInt16) {
        for packet in aclPackets(pdu, on: handle, firstBoundary: .firstNonFlushable) { record(.aclSent(packet.encoded)) }
        completedPackets(handle: handle)
    }

    /// Receives `pdu` on `handle` (controller to host), cut into ACL packets; returns the
    /// time of the last one (when the host has the PDU whole).
    @discardableResult
    public mutating func receive(_ pdu: ATTPDU, on handle: UInt16) -> Int64 {
        var last = clock
        for packet in aclPackets(pdu, on: handle, firstBoundary: .first) {
            last = clock
            record(.aclReceived(packet.encoded))
        }
        return last
    }

    /// The ACL packets that carry `pdu`, the first with `firstBoundary`.
    public func aclPackets(_ pdu: ATTPDU, on handle: UInt16, firstBoundary: ACLBoundary) -> [ACLPacket] {
        Self.aclPackets(pdu, on: handle, firstBoundary: firstBoundary, maximumPayload: aclPayload)
    }

    /// The ACL packets that carry `pdu` with at most `maximumPayload` bytes each, the first
    /// with `firstBoundary`.
    public static func aclPackets(_ pdu: ATTPDU, on handle: UInt16, firstBoundary: ACLBoundary, maximumPayload: Int) -> [ACLPacket] {
        let frame = L2CAPFrame(handle: handle, channel: L2CAPFrame.attChannel, payload: pdu.encoded)
        return frame.aclPackets(maximumPayload: maximumPayload).enumerated().map { index, packet in
            index == 0 ? ACLPacket(handle: handle, boundary: firstBoundary, payload: packet.payload) : packet
        }
    }

    /// The host asks, the strap answers; returns when the answer was whole.
    @discardableResult
    public mutating func exchange(_ request: ATTPDU, _ response: ATTPDU, on handle: UInt16) -> Int64 {
        send(request, on: handle)
        wait(30_000)
        return receive(response, on: handle)
    }

    /// The host's shortest discovery of a strap: Find Information of `handle`, answered
    /// 0x2A37.
    public mutating func discoverMeasurement(at handle: UInt16, on link: UInt16) {
        exchange(
            .findInformationRequest(start: handle, end: handle),
            .findInformationResponse([ATTHandleUUID(handle: handle, uuid: .heartRateMeasurement)]), on: link)
    }

    // MARK: Monitor records

    /// Monitor: controller `controller` appears with `address`, opens, and the system notes
    /// its version.
    public mutating func monitorPreamble(address: BluetoothAddress) {
        record(.note("Bluetooth subsystem version 2.22"))
        record(.controllerAdded(address: address, name: "hci\(controller)"))
        record(.other(opcode: MonitorOpcode.openIndex, []))
        record(.other(opcode: MonitorOpcode.indexInfo, address.littleEndian + le16(2)))
    }
}

extension CaptureBuilder {
    /// Where each record of `capture` starts (its 24-byte header) and when it was captured,
    /// walked from the bytes as laid out, not through the reader under test.
    public static func records(in capture: [UInt8]) -> [(offset: Int, unixMicroseconds: Int64)] {
        func bigEndian(_ range: Range<Int>) -> UInt64 { capture[range].reduce(0) { $0 << 8 | UInt64($1) } }
        var records: [(offset: Int, unixMicroseconds: Int64)] = []
        var offset = 16
        while offset + 24 <= capture.count {
            records.append((offset, BTSnoop.unixMicroseconds(captureTime: Int64(bitPattern: bigEndian(offset + 16..<offset + 24)))))
            offset += 24 + Int(bigEndian(offset + 4..<offset + 8))
        }
        return records
    }
}
