/// A handle and the UUID of the attribute there (Find Information Response).
public struct ATTHandleUUID: Hashable, Sendable {
    public var handle: UInt16
    public var uuid: BluetoothUUID
    public init(handle: UInt16, uuid: BluetoothUUID) {
        self.handle = handle
        self.uuid = uuid
    }
}

/// A handle and its attribute value (Read By Type Response).
public struct ATTHandleValue: Hashable, Sendable {
    public var handle: UInt16
    public var value: [UInt8]
    public init(handle: UInt16, value: [UInt8]) {
        self.handle = handle
        self.value = value
    }
}

/// A grouping attribute, the last handle of its group, and its value (Read By Group Type Response).
public struct ATTGroupValue: Hashable, Sendable {
    public var handle: UInt16
    public var endGroup: UInt16
    public var value: [UInt8]
    public init(handle: UInt16, endGroup: UInt16, value: [UInt8]) {
        self.handle = handle
        self.endGroup = endGroup
        self.value = value
    }
}

/// One Attribute Protocol PDU (Core spec Vol 3 Part F 3.4): the opcode byte and its parameters,
/// decoded into the PDUs a GATT client of a heart-rate strap sends and receives. Anything else is
/// kept whole as `other`, so it can be passed on or answered.
public enum ATTPDU: Hashable, Sendable {
    case errorResponse(request: UInt8, handle: UInt16, error: ATTErrorCode)
    case exchangeMTURequest(mtu: UInt16)
    case exchangeMTUResponse(mtu: UInt16)
    case findInformationRequest(start: UInt16, end: UInt16)
    case findInformationResponse([ATTHandleUUID])
    case readByTypeRequest(start: UInt16, end: UInt16, type: BluetoothUUID)
    case readByTypeResponse([ATTHandleValue])
    case readRequest(handle: UInt16)
    case readResponse(value: [UInt8])
    case readByGroupTypeRequest(start: UInt16, end: UInt16, type: BluetoothUUID)
    case readByGroupTypeResponse([ATTGroupValue])
    case writeRequest(handle: UInt16, value: [UInt8])
    case writeResponse
    case handleValueNotification(handle: UInt16, value: [UInt8])
    case handleValueIndication(handle: UInt16, value: [UInt8])
    case handleValueConfirmation
    case writeCommand(handle: UInt16, value: [UInt8])
    /// Any other opcode, with its parameters as they came.
    case other(opcode: UInt8, parameters: [UInt8])

    /// The opcodes this type decodes.
    public enum Opcode {
        public static let errorResponse: UInt8 = 0x01
        public static let exchangeMTURequest: UInt8 = 0x02
        public static let exchangeMTUResponse: UInt8 = 0x03
        public static let findInformationRequest: UInt8 = 0x04
        public static let findInformationResponse: UInt8 = 0x05
        public static let readByTypeRequest: UInt8 = 0x08
        public static let readByTypeResponse: UInt8 = 0x09
        public static let readRequest: UInt8 = 0x0A
        public static let readResponse: UInt8 = 0x0B
        public static let readByGroupTypeRequest: UInt8 = 0x10
        public static let readByGroupTypeResponse: UInt8 = 0x11
        public static let writeRequest: UInt8 = 0x12
        public static let writeResponse: UInt8 = 0x13
        public static let handleValueNotification: UInt8 = 0x1B
        public static let handleValueIndication: UInt8 = 0x1D
        public static let handleValueConfirmation: UInt8 = 0x1E
        public static let writeCommand: UInt8 = 0x52
    }

    /// Requests: each gets exactly one response or Error Response (commands, 0x40 set, do not).
    private static let requests: Set<UInt8> = [0x02, 0x04, 0x06, 0x08, 0x0A, 0x0C, 0x0E, 0x10, 0x12, 0x16, 0x18, 0x20]

    /// Decodes one PDU: the opcode and everything after it.
    public init(decoding pdu: some Collection<UInt8>) throws(BluetoothWireError) {
        var reader = ByteReader(pdu, what: "ATT PDU")
        guard !reader.isAtEnd else { throw .truncated(what: "ATT PDU", needed: 1, got: 0) }
        let opcode = try reader.byte()
        reader = ByteReader(reader.rest(), what: "ATT PDU 0x" + String(opcode, radix: 16))
        self = try Self.decode(opcode, &reader)
        guard reader.isAtEnd else {
            throw .malformed(what: reader.what, reason: "\(reader.remaining) unexpected bytes at its end")
        }
    }

    private static func decode(_ opcode: UInt8, _ reader: inout ByteReader) throws(BluetoothWireError) -> ATTPDU {
        switch opcode {
        case Opcode.errorResponse:
            return .errorResponse(request: try reader.byte(), handle: try reader.uint16(), error: ATTErrorCode(rawValue: try reader.byte()))
        case Opcode.exchangeMTURequest: return .exchangeMTURequest(mtu: try reader.uint16())
        case Opcode.exchangeMTUResponse: return .exchangeMTUResponse(mtu: try reader.uint16())
        case Opcode.findInformationRequest: return .findInformationRequest(start: try reader.uint16(), end: try reader.uint16())
        case Opcode.findInformationResponse: return .findInformationResponse(try findInformation(&reader))
        case Opcode.readByTypeRequest:
            return .readByTypeRequest(start: try reader.uint16(), end: try reader.uint16(), type: try uuid(&reader))
        case Opcode.readByTypeResponse:
            return .readByTypeResponse(try list(&reader, minimum: 2) { (entry) throws(BluetoothWireError) in
                ATTHandleValue(handle: try entry.uint16(), value: entry.rest())
            })
        case Opcode.readRequest: return .readRequest(handle: try reader.uint16())
        case Opcode.readResponse: return .readResponse(value: reader.rest())
        case Opcode.readByGroupTypeRequest:
            return .readByGroupTypeRequest(start: try reader.uint16(), end: try reader.uint16(), type: try uuid(&reader))
        case Opcode.readByGroupTypeResponse:
            return .readByGroupTypeResponse(try list(&reader, minimum: 4) { (entry) throws(BluetoothWireError) in
                ATTGroupValue(handle: try entry.uint16(), endGroup: try entry.uint16(), value: entry.rest())
            })
        case Opcode.writeRequest: return .writeRequest(handle: try reader.uint16(), value: reader.rest())
        case Opcode.writeResponse: return .writeResponse
        case Opcode.handleValueNotification: return .handleValueNotification(handle: try reader.uint16(), value: reader.rest())
        case Opcode.handleValueIndication: return .handleValueIndication(handle: try reader.uint16(), value: reader.rest())
        case Opcode.handleValueConfirmation: return .handleValueConfirmation
        case Opcode.writeCommand: return .writeCommand(handle: try reader.uint16(), value: reader.rest())
        default: return .other(opcode: opcode, parameters: reader.rest())
        }
    }

    /// A 2- or 16-byte UUID filling the rest of the PDU.
    private static func uuid(_ reader: inout ByteReader) throws(BluetoothWireError) -> BluetoothUUID {
        let bytes = reader.rest()
        guard let uuid = BluetoothUUID(littleEndian: bytes) else {
            throw .malformed(what: reader.what, reason: "a UUID of \(bytes.count) bytes (2 or 16 expected)")
        }
        return uuid
    }

    private static func findInformation(_ reader: inout ByteReader) throws(BluetoothWireError) -> [ATTHandleUUID] {
        let format = try reader.byte()
        let uuidLength: Int
        switch format {
        case 1: uuidLength = 2
        case 2: uuidLength = 16
        default: throw .malformed(what: reader.what, reason: "format \(format) (1 or 2 expected)")
        }
        return try entries(&reader, length: 2 + uuidLength) { (entry) throws(BluetoothWireError) in
            let handle = try entry.uint16()
            guard let uuid = BluetoothUUID(littleEndian: try entry.take(uuidLength)) else {
                throw .malformed(what: entry.what, reason: "bad UUID")
            }
            return ATTHandleUUID(handle: handle, uuid: uuid)
        }
    }

    /// A length byte, then entries of that length filling the rest.
    private static func list<Entry>(
        _ reader: inout ByteReader, minimum: Int, _ read: (inout ByteReader) throws(BluetoothWireError) -> Entry
    ) throws(BluetoothWireError) -> [Entry] {
        let length = Int(try reader.byte())
        guard length >= minimum else { throw .malformed(what: reader.what, reason: "entry length \(length) (at least \(minimum))") }
        return try entries(&reader, length: length, read)
    }

    private static func entries<Entry>(
        _ reader: inout ByteReader, length: Int, _ read: (inout ByteReader) throws(BluetoothWireError) -> Entry
    ) throws(BluetoothWireError) -> [Entry] {
        let data = reader.rest()
        guard !data.isEmpty, data.count % length == 0 else {
            throw .malformed(what: reader.what, reason: "\(data.count) bytes of data for entries of \(length)")
        }
        var entries: [Entry] = []
        var start = 0
        while start < data.count {
            var entry = ByteReader(data[start..<start + length], what: reader.what)
            entries.append(try read(&entry))
            start += length
        }
        return entries
    }

    /// The opcode byte.
    public var opcode: UInt8 {
        switch self {
        case .errorResponse: Opcode.errorResponse
        case .exchangeMTURequest: Opcode.exchangeMTURequest
        case .exchangeMTUResponse: Opcode.exchangeMTUResponse
        case .findInformationRequest: Opcode.findInformationRequest
        case .findInformationResponse: Opcode.findInformationResponse
        case .readByTypeRequest: Opcode.readByTypeRequest
        case .readByTypeResponse: Opcode.readByTypeResponse
        case .readRequest: Opcode.readRequest
        case .readResponse: Opcode.readResponse
        case .readByGroupTypeRequest: Opcode.readByGroupTypeRequest
        case .readByGroupTypeResponse: Opcode.readByGroupTypeResponse
        case .writeRequest: Opcode.writeRequest
        case .writeResponse: Opcode.writeResponse
        case .handleValueNotification: Opcode.handleValueNotification
        case .handleValueIndication: Opcode.handleValueIndication
        case .handleValueConfirmation: Opcode.handleValueConfirmation
        case .writeCommand: Opcode.writeCommand
        case .other(let opcode, _): opcode
        }
    }

    /// Whether this PDU is a request, which the peer must answer with its response or an
    /// Error Response (commands and notifications are not).
    public var isRequest: Bool { Self.requests.contains(opcode) }

    /// For a response, the opcode of the request it answers (an Error Response names it).
    public var answeredRequest: UInt8? {
        if case .errorResponse(let request, _, _) = self { return request }
        let request = opcode &- 1
        return opcode & 1 == 1 && Self.requests.contains(request) ? request : nil
    }

    /// The PDU as sent: the opcode, then the parameters, little-endian. List responses take
    /// each entry's length from the first entry; the entries of one response must agree.
    public var encoded: [UInt8] {
        var bytes: [UInt8] = [opcode]
        switch self {
        case .errorResponse(let request, let handle, let error):
            bytes.append(request)
            bytes.appendLittleEndian(handle)
            bytes.append(error.rawValue)
        case .exchangeMTURequest(let mtu), .exchangeMTUResponse(let mtu):
            bytes.appendLittleEndian(mtu)
        case .findInformationRequest(let start, let end):
            bytes.appendLittleEndian(start)
            bytes.appendLittleEndian(end)
        case .findInformationResponse(let entries):
            bytes.append(entries.first.map { $0.uuid.littleEndian.count == 2 ? 1 : 2 } ?? 1)
            for entry in entries {
                bytes.appendLittleEndian(entry.handle)
                bytes += entry.uuid.littleEndian
            }
        case .readByTypeRequest(let start, let end, let type), .readByGroupTypeRequest(let start, let end, let type):
            bytes.appendLittleEndian(start)
            bytes.appendLittleEndian(end)
            bytes += type.littleEndian
        case .readByTypeResponse(let entries):
            bytes.append(UInt8(truncatingIfNeeded: 2 + (entries.first?.value.count ?? 0)))
            for entry in entries {
                bytes.appendLittleEndian(entry.handle)
                bytes += entry.value
            }
        case .readRequest(let handle):
            bytes.appendLittleEndian(handle)
        case .readResponse(let value):
            bytes += value
        case .readByGroupTypeResponse(let entries):
            bytes.append(UInt8(truncatingIfNeeded: 4 + (entries.first?.value.count ?? 0)))
            for entry in entries {
                bytes.appendLittleEndian(entry.handle)
                bytes.appendLittleEndian(entry.endGroup)
                bytes += entry.value
            }
        case .writeRequest(let handle, let value), .handleValueNotification(let handle, let value),
            .handleValueIndication(let handle, let value), .writeCommand(let handle, let value):
            bytes.appendLittleEndian(handle)
            bytes += value
        case .writeResponse, .handleValueConfirmation:
            break
        case .other(_, let parameters):
            bytes += parameters
        }
        return bytes
    }
}
