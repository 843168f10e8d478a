/// Why bytes from the host interface (an HCI packet, an L2CAP frame, an ATT PDU, a capture
/// record) could not be read.
public enum BluetoothWireError: Error, Hashable, Sendable, CustomStringConvertible {
    /// `what` needs `needed` bytes and only `got` were there.
    case truncated(what: String, needed: Int, got: Int)
    /// `what` is the wrong shape, and why.
    case malformed(what: String, reason: String)

    public var description: String {
        switch self {
        case .truncated(let what, let needed, let got): "\(what) is truncated: \(needed) bytes needed, \(got) present"
        case .malformed(let what, let reason): "\(what) is malformed: \(reason)"
        }
    }
}

/// Reads little-endian fields front to back from one packet, naming the packet in errors.
struct ByteReader {
    private let bytes: [UInt8]
    private(set) var offset = 0
    let what: String

    init(_ bytes: some Collection<UInt8>, what: String) {
        self.bytes = Array(bytes)
        self.what = what
    }

    var remaining: Int { bytes.count - offset }
    var isAtEnd: Bool { offset >= bytes.count }

    mutating func byte() throws(BluetoothWireError) -> UInt8 {
        try need(1)
        defer { offset += 1 }
        return bytes[offset]
    }

    mutating func uint16() throws(BluetoothWireError) -> UInt16 {
        try need(2)
        defer { offset += 2 }
        return UInt16(bytes[offset]) | UInt16(bytes[offset + 1]) << 8
    }

    mutating func take(_ count: Int) throws(BluetoothWireError) -> [UInt8] {
        try need(count)
        defer { offset += count }
        return Array(bytes[offset..<offset + count])
    }

    /// Everything not read yet.
    mutating func rest() -> [UInt8] {
        defer { offset = bytes.count }
        return Array(bytes[min(offset, bytes.count)...])
    }

    private func need(_ count: Int) throws(BluetoothWireError) {
        guard count >= 0, remaining >= count else { throw .truncated(what: what, needed: offset + count, got: bytes.count) }
    }
}

extension Array where Element == UInt8 {
    /// Appends `value` least significant byte first.
    mutating func appendLittleEndian(_ value: UInt16) {
        append(UInt8(truncatingIfNeeded: value))
        append(UInt8(truncatingIfNeeded: value >> 8))
    }
}
