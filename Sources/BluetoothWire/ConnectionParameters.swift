/// The timing of an LE connection as a peripheral asks for it (L2CAP Connection Parameter
/// Update Request, or the link layer's Remote Connection Parameter Request) and as the central
/// sets it, in the units the spec uses.
public struct ConnectionParameters: Hashable, Sendable, CustomStringConvertible {
    /// The shortest connection interval, in units of 1.25 ms.
    public var minimumInterval: UInt16
    /// The longest connection interval, in units of 1.25 ms.
    public var maximumInterval: UInt16
    /// How many connection events the peripheral may skip.
    public var latency: UInt16
    /// How long a silent link lives, in units of 10 ms.
    public var supervisionTimeout: UInt16

    public init(minimumInterval: UInt16, maximumInterval: UInt16, latency: UInt16, supervisionTimeout: UInt16) {
        self.minimumInterval = minimumInterval
        self.maximumInterval = maximumInterval
        self.latency = latency
        self.supervisionTimeout = supervisionTimeout
    }

    /// Whether the Core spec allows these parameters: intervals 7.5 ms to 4 s with minimum ≤
    /// maximum, latency at most 499, a timeout of 100 ms to 32 s that is longer than twice the
    /// time the peripheral may stay silent ((1 + latency) × the longest interval). The Linux
    /// kernel checks the same (`hci_check_conn_params`).
    public var isValid: Bool {
        guard (6...3200).contains(minimumInterval), (6...3200).contains(maximumInterval), minimumInterval <= maximumInterval else {
            return false
        }
        guard latency <= 499, (10...3200).contains(supervisionTimeout) else { return false }
        // timeout × 10 ms > 2 × (1 + latency) × maximum × 1.25 ms
        return Int(supervisionTimeout) * 4 > (1 + Int(latency)) * Int(maximumInterval)
    }

    public var description: String {
        func milliseconds(_ interval: UInt16) -> String {
            let hundredths = Int(interval) * 125
            let fraction = hundredths % 100
            return "\(hundredths / 100).\(fraction < 10 ? "0" : "")\(fraction)"
        }
        return "interval \(milliseconds(minimumInterval))–\(milliseconds(maximumInterval)) ms, latency \(latency), "
            + "timeout \(Int(supervisionTimeout) * 10) ms"
    }

    /// Reads the four little-endian fields in the order both requests carry them.
    init(reading reader: inout ByteReader) throws(BluetoothWireError) {
        self.init(
            minimumInterval: try reader.uint16(), maximumInterval: try reader.uint16(), latency: try reader.uint16(),
            supervisionTimeout: try reader.uint16())
    }

    /// The four fields, little-endian, in the order both requests carry them.
    var encoded: [UInt8] {
        var bytes: [UInt8] = []
        for field in [minimumInterval, maximumInterval, latency, supervisionTimeout] { bytes.appendLittleEndian(field) }
        return bytes
    }
}

/// A command on the LE signaling channel (L2CAP CID 5; Core spec Vol 3 Part A 4): code,
/// identifier, length, data. A peripheral asks for new connection parameters here.
public enum LESignalingPacket: Hashable, Sendable {
    case connectionParameterUpdateRequest(identifier: UInt8, ConnectionParameters)
    case connectionParameterUpdateResponse(identifier: UInt8, accepted: Bool)
    case other(code: UInt8, identifier: UInt8, data: [UInt8])

    public static let connectionParameterUpdateRequestCode: UInt8 = 0x12
    public static let connectionParameterUpdateResponseCode: UInt8 = 0x13

    /// Reads one command from a frame's payload.
    public init(decoding payload: some Collection<UInt8>) throws(BluetoothWireError) {
        var reader = ByteReader(payload, what: "LE signaling command")
        let code = try reader.byte()
        let identifier = try reader.byte()
        let length = Int(try reader.uint16())
        var data = ByteReader(try reader.take(length), what: "LE signaling command 0x" + String(code, radix: 16))
        switch code {
        case Self.connectionParameterUpdateRequestCode:
            self = .connectionParameterUpdateRequest(identifier: identifier, try ConnectionParameters(reading: &data))
        case Self.connectionParameterUpdateResponseCode:
            self = .connectionParameterUpdateResponse(identifier: identifier, accepted: try data.uint16() == 0)
        default:
            self = .other(code: code, identifier: identifier, data: data.rest())
        }
        guard data.isAtEnd else { throw .malformed(what: data.what, reason: "\(data.remaining) unexpected bytes at its end") }
    }

    /// The command as carried in the frame's payload.
    public var encoded: [UInt8] {
        let (code, identifier, data): (UInt8, UInt8, [UInt8]) = switch self {
        case .connectionParameterUpdateRequest(let identifier, let parameters):
            (Self.connectionParameterUpdateRequestCode, identifier, parameters.encoded)
        case .connectionParameterUpdateResponse(let identifier, let accepted):
            (Self.connectionParameterUpdateResponseCode, identifier, accepted ? [0, 0] : [1, 0])
        case .other(let code, let identifier, let data): (code, identifier, data)
        }
        var bytes = [code, identifier]
        bytes.appendLittleEndian(UInt16(truncatingIfNeeded: data.count))
        return bytes + data
    }
}
