import BluetoothWire
import Timestamps

/// A Handle Value Notification or Indication as it arrived: the attribute, its value, and
/// when the client read it from the socket.
public struct ATTNotification: Sendable, Hashable {
    public var handle: UInt16
    public var value: [UInt8]
    public var time: Timestamp

    public init(handle: UInt16, value: [UInt8], time: Timestamp) {
        self.handle = handle
        self.value = value
        self.time = time
    }
}

/// Why an ATT request failed, or why the client's bearer ended.
public enum ATTClientError: Error, Hashable, Sendable, CustomStringConvertible {
    /// No response within the transaction timeout; the bearer is then unusable (ATT spec) and closed.
    case timeout(request: UInt8)
    /// The peer closed the link (or it was closed here).
    case closed
    /// A send or receive on the socket failed.
    case io(BluetoothSocketError)
    /// The peer answered the request with an Error Response.
    case errorResponse(request: UInt8, handle: UInt16, error: ATTErrorCode)
    /// The response does not decode, or is larger than the ATT_MTU allows.
    case malformed(BluetoothWireError)
    /// A response that does not answer the outstanding request.
    case unexpected(ATTPDU)

    public var description: String {
        switch self {
        case .timeout(let request): "no response to the \(ATTOpcodeName.of(request)) within the transaction timeout"
        case .closed: "the link is closed"
        case .io(let error): error.description
        case .errorResponse(let request, let handle, let error):
            "\(ATTOpcodeName.of(request)) for handle \(hexCode(handle)) failed: \(error)"
        case .malformed(let error): error.description
        case .unexpected(let pdu): "an unexpected \(ATTOpcodeName.of(pdu.opcode))"
        }
    }
}

/// The names of ATT opcodes, for messages a person reads.
enum ATTOpcodeName {
    private static let names: [UInt8: String] = [
        0x01: "Error Response", 0x02: "Exchange MTU Request", 0x03: "Exchange MTU Response",
        0x04: "Find Information Request", 0x05: "Find Information Response", 0x06: "Find By Type Value Request",
        0x07: "Find By Type Value Response", 0x08: "Read By Type Request", 0x09: "Read By Type Response",
        0x0A: "Read Request", 0x0B: "Read Response", 0x0C: "Read Blob Request", 0x0D: "Read Blob Response",
        0x10: "Read By Group Type Request", 0x11: "Read By Group Type Response", 0x12: "Write Request",
        0x13: "Write Response", 0x1B: "Handle Value Notification", 0x1D: "Handle Value Indication",
        0x1E: "Handle Value Confirmation", 0x52: "Write Command",
    ]

    /// `Read By Type Request (0x08)`; `ATT PDU 0x7f` for opcodes without a name here.
    static func of(_ opcode: UInt8) -> String {
        guard let name = names[opcode] else { return "ATT PDU \(hexCode(opcode))" }
        return "\(name) (\(hexCode(opcode)))"
    }
}
