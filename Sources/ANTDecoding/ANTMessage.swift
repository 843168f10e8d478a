/// One ANT serial message: `A4 length id payload… checksum`, the checksum being the XOR of
/// every earlier byte, the sync byte included.
public struct ANTMessage: Sendable, Hashable, CustomStringConvertible {
    public static let sync: UInt8 = 0xA4

    public var id: UInt8
    public var payload: [UInt8]

    public init(id: UInt8, payload: [UInt8]) {
        self.id = id
        self.payload = payload
    }

    /// The bytes on the wire.
    public func encoded() -> [UInt8] {
        var bytes = [Self.sync, UInt8(payload.count), id] + payload
        bytes.append(Self.checksum(bytes))
        return bytes
    }

    /// XOR of `bytes`.
    public static func checksum(_ bytes: some Sequence<UInt8>) -> UInt8 {
        bytes.reduce(0, ^)
    }

    public var description: String {
        "ANT 0x\(String(id, radix: 16)) [" + payload.map { String($0, radix: 16) }.joined(separator: " ") + "]"
    }
}

/// The message ids hrmd sends and reads.
public enum ANTMessageID {
    public static let channelEvent: UInt8 = 0x40
    public static let unassignChannel: UInt8 = 0x41
    public static let assignChannel: UInt8 = 0x42
    public static let channelPeriod: UInt8 = 0x43
    public static let searchTimeout: UInt8 = 0x44
    public static let rfFrequency: UInt8 = 0x45
    public static let networkKey: UInt8 = 0x46
    public static let reset: UInt8 = 0x4A
    public static let openChannel: UInt8 = 0x4B
    public static let closeChannel: UInt8 = 0x4C
    public static let broadcastData: UInt8 = 0x4E
    public static let channelID: UInt8 = 0x51
    public static let enableExtendedMessages: UInt8 = 0x66
    public static let startup: UInt8 = 0x6F
}
