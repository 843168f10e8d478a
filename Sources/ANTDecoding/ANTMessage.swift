/// One ANT serial message: `A4 length id payload… checksum`.
///
/// The length byte counts the payload only; the checksum is the XOR of every earlier byte
/// of the frame, the sync byte included. `A4 03 40 00 46 00 A1` is a channel response
/// (0x40) on channel 0 to set-network-key (0x46) with code 0, "no error".
public struct ANTMessage: Sendable, Hashable {
    /// The byte every frame starts with.
    public static let sync: UInt8 = 0xA4
    /// The largest length byte ANT allows (the ANT SDK's `MESG_MAX_SIZE_VALUE`): a channel
    /// byte, 8 data bytes, a flag byte and extended data.
    public static let maximumPayloadLength = 41
    /// What a frame adds around its payload: sync, length, id and checksum.
    public static let frameOverhead = 4

    /// The message id (see ``ANTMessageID``).
    public var id: UInt8
    /// The bytes between the id and the checksum.
    public var payload: [UInt8]

    /// A message with `id` and `payload`.
    public init(id: UInt8, payload: [UInt8]) {
        self.id = id
        self.payload = payload
    }

    /// Decodes exactly one whole frame, sync byte to checksum.
    ///
    /// - Throws: ``ANTError/notSync(_:)`` when it does not start with A4,
    ///   ``ANTError/frameLength(declared:actual:)`` when its length byte disagrees with its
    ///   size, ``ANTError/badChecksum(expected:found:)`` when the checksum does not match.
    public init(frame: some Collection<UInt8>) throws(ANTError) {
        let bytes = Array(frame)
        guard let first = bytes.first, first == Self.sync else { throw .notSync(bytes.first) }
        guard bytes.count >= Self.frameOverhead else {
            throw .frameLength(declared: bytes.count > 1 ? Int(bytes[1]) : nil, actual: bytes.count)
        }
        let length = Int(bytes[1])
        guard bytes.count == length + Self.frameOverhead else {
            throw .frameLength(declared: length, actual: bytes.count)
        }
        let expected = Self.checksum(bytes.dropLast())
        guard expected == bytes[bytes.count - 1] else {
            throw .badChecksum(expected: expected, found: bytes[bytes.count - 1])
        }
        self.init(id: bytes[2], payload: Array(bytes[3..<(bytes.count - 1)]))
    }

    /// The bytes on the wire: sync, length, id, payload and checksum.
    ///
    /// - Precondition: the payload has at most 255 bytes (the length is one byte).
    public func encoded() -> [UInt8] {
        precondition(payload.count <= Int(UInt8.max), "an ANT payload has at most 255 bytes")
        var bytes: [UInt8] = [Self.sync, UInt8(payload.count), id]
        bytes.reserveCapacity(payload.count + Self.frameOverhead)
        bytes.append(contentsOf: payload)
        bytes.append(Self.checksum(bytes))
        return bytes
    }

    /// The XOR of `bytes`: of a frame's bytes before its checksum, that checksum.
    public static func checksum(_ bytes: some Sequence<UInt8>) -> UInt8 {
        bytes.reduce(0, ^)
    }
}

extension ANTMessage: CustomStringConvertible {
    /// The id and payload in hex, e.g. `0x40 [00 46 00]`.
    public var description: String {
        "\(hexByte(id)) [" + payload.map { hexDigits($0) }.joined(separator: " ") + "]"
    }
}

/// The ANT message ids hrmd sends and reads.
public enum ANTMessageID {
    /// Channel response or RF event (0x40): `[channel, message id or 1, code]`.
    public static let channelEvent: UInt8 = 0x40
    /// The message-id byte of a ``channelEvent`` that carries an RF event, not an answer.
    public static let rfEvent: UInt8 = 0x01
    /// Unassign channel (0x41): `[channel]`.
    public static let unassignChannel: UInt8 = 0x41
    /// Assign channel (0x42): `[channel, type, network]`.
    public static let assignChannel: UInt8 = 0x42
    /// Set channel period (0x43): `[channel, period u16 LE]`, in 1/32768 s.
    public static let channelPeriod: UInt8 = 0x43
    /// Set channel search timeout (0x44): `[channel, timeout]`.
    public static let searchTimeout: UInt8 = 0x44
    /// Set channel RF frequency (0x45): `[channel, MHz above 2400]`.
    public static let rfFrequency: UInt8 = 0x45
    /// Set network key (0x46): `[network, 8 key bytes]`.
    public static let networkKey: UInt8 = 0x46
    /// Reset system (0x4A): `[0]`; the stick answers with ``startup``.
    public static let reset: UInt8 = 0x4A
    /// Open channel (0x4B): `[channel]`.
    public static let openChannel: UInt8 = 0x4B
    /// Close channel (0x4C): `[channel]`.
    public static let closeChannel: UInt8 = 0x4C
    /// Request message (0x4D): `[channel, message id]`.
    public static let requestMessage: UInt8 = 0x4D
    /// Broadcast data (0x4E): `[channel, 8 data bytes]`, then optional flagged extended data.
    public static let broadcastData: UInt8 = 0x4E
    /// Acknowledged data (0x4F): `[channel, 8 data bytes]`.
    public static let acknowledgedData: UInt8 = 0x4F
    /// Set channel id (0x51): `[channel, device number u16 LE, device type, transmission type]`;
    /// also the answer to a request for the channel id.
    public static let channelID: UInt8 = 0x51
    /// Legacy extended broadcast data (0x5D): `[channel, device number u16 LE, device type,
    /// transmission type, 8 data bytes]`.
    public static let legacyExtendedBroadcastData: UInt8 = 0x5D
    /// Enable extended receive messages (0x66): `[0, enable]`.
    public static let enableExtendedMessages: UInt8 = 0x66
    /// Startup message (0x6F): `[reason bits]`, sent after a reset.
    public static let startup: UInt8 = 0x6F
    /// Serial error (0xAE): the stick could not read a message it was sent.
    public static let serialError: UInt8 = 0xAE
}

/// `0x4E`.
func hexByte(_ byte: UInt8) -> String { "0x" + hexDigits(byte) }

/// `4E`: two upper-case hex digits.
func hexDigits(_ byte: UInt8) -> String {
    let digits = String(byte, radix: 16, uppercase: true)
    return byte < 0x10 ? "0" + digits : digits
}
