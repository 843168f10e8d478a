/// Where an ACL packet's payload sits in its L2CAP frame (the Packet_Boundary_Flag).
public enum ACLBoundary: UInt8, Sendable, Hashable {
    /// The start of a frame, not automatically flushable (host to controller).
    case firstNonFlushable = 0
    /// A continuation of the frame started before on the same handle.
    case continuation = 1
    /// The start of a frame (controller to host, and flushable host to controller).
    case first = 2
    /// A whole, automatically flushable frame.
    case complete = 3

    /// Whether a packet with this flag starts a new L2CAP frame.
    public var startsFrame: Bool { self != .continuation }
}

/// One HCI ACL data packet (Core spec Vol 4 Part E 5.4.2), without the H4 type byte: a
/// connection handle with its flags, a length, and a fragment of an L2CAP frame.
public struct ACLPacket: Hashable, Sendable {
    /// The connection handle (12 bits).
    public var handle: UInt16
    public var boundary: ACLBoundary
    public var payload: [UInt8]

    public init(handle: UInt16, boundary: ACLBoundary, payload: [UInt8]) {
        self.handle = handle & 0x0FFF
        self.boundary = boundary
        self.payload = payload
    }

    /// Reads a whole packet; its length field must match the bytes that follow.
    public init(decoding packet: some Collection<UInt8>) throws(BluetoothWireError) {
        var reader = ByteReader(packet, what: "ACL packet")
        let flagsAndHandle = try reader.uint16()
        let length = Int(try reader.uint16())
        let payload = try reader.take(length)
        guard reader.isAtEnd else {
            throw .malformed(what: "ACL packet", reason: "length \(length) but \(length + reader.remaining) bytes follow")
        }
        self.init(
            handle: flagsAndHandle & 0x0FFF, boundary: ACLBoundary(rawValue: UInt8((flagsAndHandle >> 12) & 0x3)) ?? .first,
            payload: payload)
    }

    /// The packet as carried: handle and flags, length, payload (little-endian).
    public var encoded: [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(4 + payload.count)
        bytes.appendLittleEndian(handle & 0x0FFF | UInt16(boundary.rawValue) << 12)
        bytes.appendLittleEndian(UInt16(truncatingIfNeeded: payload.count))
        return bytes + payload
    }
}

/// One L2CAP basic frame (B-frame) on an LE link: the channel and its payload, e.g. an ATT
/// PDU on channel 4 or an LE signaling command on channel 5.
public struct L2CAPFrame: Hashable, Sendable {
    /// The Attribute Protocol's fixed channel.
    public static let attChannel: UInt16 = 4
    /// The LE signaling channel (connection parameter updates).
    public static let leSignalingChannel: UInt16 = 5

    public var handle: UInt16
    public var channel: UInt16
    public var payload: [UInt8]

    public init(handle: UInt16, channel: UInt16, payload: [UInt8]) {
        self.handle = handle
        self.channel = channel
        self.payload = payload
    }

    /// The ACL packets that carry this frame: a first packet, then continuations, each with at
    /// most `maximumPayload` bytes (27 is the LE default data length).
    public func aclPackets(maximumPayload: Int = 27) -> [ACLPacket] {
        var frame: [UInt8] = []
        frame.appendLittleEndian(UInt16(truncatingIfNeeded: payload.count))
        frame.appendLittleEndian(channel)
        frame += payload
        let size = max(1, maximumPayload)
        return stride(from: 0, to: frame.count, by: size).map { start in
            ACLPacket(
                handle: handle, boundary: start == 0 ? .first : .continuation,
                payload: Array(frame[start..<min(start + size, frame.count)]))
        }
    }
}
