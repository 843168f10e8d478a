/// Why ANT bytes could not be read as what was asked, or why the stick refused a command.
/// Every description is one line.
public enum ANTError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A frame did not start with the sync byte A4 (nil: it was empty).
    case notSync(UInt8?)
    /// A frame's length byte (nil: missing) disagrees with its size.
    case frameLength(declared: Int?, actual: Int)
    /// A frame's checksum byte is not the XOR of the bytes before it.
    case badChecksum(expected: UInt8, found: UInt8)
    /// The message is not broadcast data (0x4E or legacy extended 0x5D).
    case notBroadcastData(messageID: UInt8)
    /// The message's payload is shorter than its kind needs.
    case payloadTooShort(messageID: UInt8, count: Int, needed: Int)
    /// An ANT+ data page is not 8 bytes.
    case pageLength(Int)
    /// The stick answered a command with an error code.
    case commandFailed(command: UInt8, channel: UInt8, code: ANTEventCode)

    /// What went wrong, in one line.
    public var description: String {
        switch self {
        case .notSync(nil):
            "empty ANT frame"
        case .notSync(let byte?):
            "ANT frame starts with \(hexByte(byte)), not the sync byte 0xA4"
        case .frameLength(let declared?, let actual):
            "ANT frame declares \(declared) payload bytes but is \(actual) bytes long"
        case .frameLength(nil, let actual):
            "ANT frame of \(actual) bytes is too short to hold a message"
        case .badChecksum(let expected, let found):
            "ANT frame checksum is \(hexByte(found)), expected \(hexByte(expected))"
        case .notBroadcastData(let id):
            "ANT message \(hexByte(id)) is not broadcast data"
        case .payloadTooShort(let id, let count, let needed):
            "ANT message \(hexByte(id)) has \(count) payload bytes, needs \(needed)"
        case .pageLength(let count):
            "ANT+ data page has \(count) bytes, not 8"
        case .commandFailed(let command, let channel, let code):
            "ANT stick refused command \(hexByte(command)) on channel \(channel): \(code)"
        }
    }
}
