/// Broadcast data received on a channel: 8 data bytes (one ANT+ data page) and, when
/// extended messages are on, the channel id of the device that sent them.
///
/// Two layouts carry the sender:
/// - flagged 0x4E: `[channel, 8 data bytes, flag, …]`; flag bit 0x80 means the next four
///   bytes are device number (u16 LE), device type and transmission type. Other flag bits
///   (RSSI 0x40, timestamp 0x20) add fields after those, which are not read here.
/// - legacy 0x5D: `[channel, device number (u16 LE), device type, transmission type, 8 data bytes]`.
public struct BroadcastData: Sendable, Hashable {
    /// The channel flag bit announcing the device id in flagged extended data.
    public static let deviceIDFlag: UInt8 = 0x80

    /// The stick channel it arrived on.
    public var channel: UInt8
    /// The 8 data bytes.
    public var data: [UInt8]
    /// The sender's device number, when extended data names it.
    public var deviceNumber: UInt16?
    /// The sender's device type (120 for a heart-rate strap), when extended data names it.
    public var deviceType: UInt8?
    /// The sender's transmission type, when extended data names it.
    public var transmissionType: UInt8?

    /// Broadcast data with these fields.
    public init(channel: UInt8, data: [UInt8], deviceNumber: UInt16? = nil, deviceType: UInt8? = nil, transmissionType: UInt8? = nil) {
        self.channel = channel
        self.data = data
        self.deviceNumber = deviceNumber
        self.deviceType = deviceType
        self.transmissionType = transmissionType
    }

    /// Reads broadcast data (0x4E, plain or flagged) or legacy extended broadcast data (0x5D).
    ///
    /// - Throws: ``ANTError/notBroadcastData(messageID:)`` for another message;
    ///   ``ANTError/payloadTooShort(messageID:count:needed:)`` when the payload cannot hold
    ///   the channel and 8 data bytes, or the flag announces a device id that is not there.
    public init(_ message: ANTMessage) throws(ANTError) {
        let payload = message.payload
        switch message.id {
        case ANTMessageID.broadcastData:
            guard payload.count >= 9 else { throw .payloadTooShort(messageID: message.id, count: payload.count, needed: 9) }
            self.init(channel: payload[0], data: Array(payload[1...8]))
            guard payload.count >= 10, payload[9] & Self.deviceIDFlag != 0 else { return }
            guard payload.count >= 14 else { throw .payloadTooShort(messageID: message.id, count: payload.count, needed: 14) }
            readChannelID(payload, at: 10)
        case ANTMessageID.legacyExtendedBroadcastData:
            guard payload.count >= 13 else { throw .payloadTooShort(messageID: message.id, count: payload.count, needed: 13) }
            self.init(channel: payload[0], data: Array(payload[5...12]))
            readChannelID(payload, at: 1)
        default:
            throw .notBroadcastData(messageID: message.id)
        }
    }

    private mutating func readChannelID(_ payload: [UInt8], at index: Int) {
        deviceNumber = UInt16(payload[index]) | UInt16(payload[index + 1]) << 8
        deviceType = payload[index + 2]
        transmissionType = payload[index + 3]
    }
}
