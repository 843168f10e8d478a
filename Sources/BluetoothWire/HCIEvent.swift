/// A central's role in an LE connection.
public enum LERole: UInt8, Sendable, Hashable {
    case central = 0
    case peripheral = 1
}

/// An LE connection came up (or failed to): LE Connection Complete or Enhanced Connection Complete.
public struct LEConnectionComplete: Hashable, Sendable {
    /// 0 on success, else the HCI error code.
    public var status: UInt8
    public var handle: UInt16
    public var role: LERole
    public var peerAddressType: LEAddressType
    public var peer: BluetoothAddress
    /// Units of 1.25 ms.
    public var interval: UInt16
    public var latency: UInt16
    /// Units of 10 ms.
    public var supervisionTimeout: UInt16

    public init(
        status: UInt8, handle: UInt16, role: LERole, peerAddressType: LEAddressType, peer: BluetoothAddress,
        interval: UInt16, latency: UInt16, supervisionTimeout: UInt16
    ) {
        self.status = status
        self.handle = handle
        self.role = role
        self.peerAddressType = peerAddressType
        self.peer = peer
        self.interval = interval
        self.latency = latency
        self.supervisionTimeout = supervisionTimeout
    }
}

/// An HCI event (Core spec Vol 4 Part E 7.7), decoded where hrmd acts on it or follows a
/// connection by it; every other event is kept whole as `other`.
public enum HCIEvent: Hashable, Sendable {
    case disconnectionComplete(status: UInt8, handle: UInt16, reason: UInt8)
    case commandComplete(opcode: UInt16, returnParameters: [UInt8])
    case commandStatus(status: UInt8, opcode: UInt16)
    case leConnectionComplete(LEConnectionComplete)
    case leAdvertisingReports([AdvertisingReport])
    case leConnectionUpdateComplete(status: UInt8, handle: UInt16, interval: UInt16, latency: UInt16, supervisionTimeout: UInt16)
    case leRemoteConnectionParameterRequest(handle: UInt16, ConnectionParameters)
    case other(code: UInt8, parameters: [UInt8])

    public enum Code {
        public static let disconnectionComplete: UInt8 = 0x05
        public static let commandComplete: UInt8 = 0x0E
        public static let commandStatus: UInt8 = 0x0F
        public static let leMeta: UInt8 = 0x3E
    }

    public enum LESubevent {
        public static let connectionComplete: UInt8 = 0x01
        public static let advertisingReport: UInt8 = 0x02
        public static let connectionUpdateComplete: UInt8 = 0x03
        public static let remoteConnectionParameterRequest: UInt8 = 0x06
        public static let enhancedConnectionComplete: UInt8 = 0x0A
        public static let extendedAdvertisingReport: UInt8 = 0x0D
    }

    /// Decodes an event packet without its H4 type byte: the code, the parameter length, the
    /// parameters (which must be all there).
    public init(decoding packet: some Collection<UInt8>) throws(BluetoothWireError) {
        var header = ByteReader(packet, what: "HCI event")
        let code = try header.byte()
        let length = Int(try header.byte())
        let what = "HCI event 0x" + String(code, radix: 16)
        let parameters = try header.take(length)
        guard header.isAtEnd else { throw .malformed(what: what, reason: "\(header.remaining) bytes after its parameters") }
        var reader = ByteReader(parameters, what: what)
        switch code {
        case Code.disconnectionComplete:
            self = .disconnectionComplete(status: try reader.byte(), handle: try reader.uint16() & 0x0FFF, reason: try reader.byte())
        case Code.commandComplete:
            _ = try reader.byte()  // how many commands the controller takes now
            self = .commandComplete(opcode: try reader.uint16(), returnParameters: reader.rest())
        case Code.commandStatus:
            let status = try reader.byte()
            _ = try reader.byte()
            self = .commandStatus(status: status, opcode: try reader.uint16())
        case Code.leMeta:
            self = try Self.decodeLEMeta(&reader) ?? .other(code: code, parameters: parameters)
        default:
            self = .other(code: code, parameters: parameters)
        }
    }

    /// An LE meta event hrmd knows, or nil to keep it whole.
    private static func decodeLEMeta(_ reader: inout ByteReader) throws(BluetoothWireError) -> HCIEvent? {
        let subevent = try reader.byte()
        reader = ByteReader(reader.rest(), what: "LE meta event 0x" + String(subevent, radix: 16))
        switch subevent {
        case LESubevent.connectionComplete, LESubevent.enhancedConnectionComplete:
            let status = try reader.byte()
            let handle = try reader.uint16() & 0x0FFF
            let role = LERole(rawValue: try reader.byte()) ?? .central
            let typeByte = try reader.byte()
            let peer = try address(&reader)
            if subevent == LESubevent.enhancedConnectionComplete { _ = try reader.take(12) }  // resolvable private addresses
            let interval = try reader.uint16(), latency = try reader.uint16(), timeout = try reader.uint16()
            return .leConnectionComplete(LEConnectionComplete(
                status: status, handle: handle, role: role, peerAddressType: LEAddressType(hci: typeByte) ?? .public, peer: peer,
                interval: interval, latency: latency, supervisionTimeout: timeout))
        case LESubevent.advertisingReport:
            return .leAdvertisingReports(try advertisingReports(&reader))
        case LESubevent.extendedAdvertisingReport:
            return .leAdvertisingReports(try extendedAdvertisingReports(&reader))
        case LESubevent.connectionUpdateComplete:
            return .leConnectionUpdateComplete(
                status: try reader.byte(), handle: try reader.uint16() & 0x0FFF, interval: try reader.uint16(),
                latency: try reader.uint16(), supervisionTimeout: try reader.uint16())
        case LESubevent.remoteConnectionParameterRequest:
            return .leRemoteConnectionParameterRequest(handle: try reader.uint16() & 0x0FFF, try ConnectionParameters(reading: &reader))
        default:
            return nil
        }
    }

    private static func address(_ reader: inout ByteReader) throws(BluetoothWireError) -> BluetoothAddress {
        let bytes = try reader.take(6)
        guard let address = BluetoothAddress(littleEndian: bytes) else { throw .malformed(what: reader.what, reason: "bad address") }
        return address
    }

    /// LE Advertising Report: a count, then each report whole (event type, address type,
    /// address, data length, data, RSSI), as controllers and the Linux kernel lay them out.
    private static func advertisingReports(_ reader: inout ByteReader) throws(BluetoothWireError) -> [AdvertisingReport] {
        let count = Int(try reader.byte())
        var reports: [AdvertisingReport] = []
        for _ in 0..<count {
            let eventType = try reader.byte()
            let typeByte = try reader.byte()
            let address = try address(&reader)
            let data = try AdvertisingData(decoding: try reader.take(Int(try reader.byte())))
            let rssi = Int8(bitPattern: try reader.byte())
            guard let type = LEAddressType(hci: typeByte) else { continue }
            reports.append(AdvertisingReport(
                eventType: UInt16(eventType), addressType: type, address: address, data: data, rssi: rssi == 127 ? nil : rssi))
        }
        return reports
    }

    /// LE Extended Advertising Report (Bluetooth 5 controllers): anonymous advertisers
    /// (address type 0xFF) are left out.
    private static func extendedAdvertisingReports(_ reader: inout ByteReader) throws(BluetoothWireError) -> [AdvertisingReport] {
        let count = Int(try reader.byte())
        var reports: [AdvertisingReport] = []
        for _ in 0..<count {
            let eventType = try reader.uint16()
            let typeByte = try reader.byte()
            let address = try address(&reader)
            _ = try reader.take(4)  // primary and secondary PHY, advertising SID, TX power
            let rssi = Int8(bitPattern: try reader.byte())
            _ = try reader.take(9)  // periodic advertising interval, direct address type and address
            let data = try AdvertisingData(decoding: try reader.take(Int(try reader.byte())))
            guard let type = LEAddressType(hci: typeByte) else { continue }
            reports.append(AdvertisingReport(
                eventType: eventType, addressType: type, address: address, data: data, rssi: rssi == 127 ? nil : rssi))
        }
        return reports
    }
}
