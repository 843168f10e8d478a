/// The messages that open an ANT+ heart-rate receive channel, and the stick's answers.
public enum ANTChannelSetup {
    /// ANT+ heart-rate monitors: device type 120, period 8070 (4.06 Hz), RF channel 57.
    public static let heartRateDeviceType: UInt8 = 120
    public static let heartRatePeriod: UInt16 = 8070
    public static let antPlusFrequency: UInt8 = 57

    /// Reset the stick (it answers with a startup message).
    public static let reset = ANTMessage(id: ANTMessageID.reset, payload: [0])

    /// The set-up after a reset, in order: network key, assign (receive), channel id (any
    /// device number of type 120, or one strap's number), period, frequency, extended
    /// messages on, open. Each is answered by a channel response.
    public static func heartRateReceiveChannel(channel: UInt8, deviceNumber: UInt16 = 0, networkKey: [UInt8]) -> [ANTMessage] {
        [
            ANTMessage(id: ANTMessageID.networkKey, payload: [0] + networkKey),
            ANTMessage(id: ANTMessageID.assignChannel, payload: [channel, 0x00, 0]),
            ANTMessage(id: ANTMessageID.channelID, payload: [channel, UInt8(deviceNumber & 0xFF), UInt8(deviceNumber >> 8), heartRateDeviceType, 0]),
            ANTMessage(id: ANTMessageID.channelPeriod, payload: [channel, UInt8(heartRatePeriod & 0xFF), UInt8(heartRatePeriod >> 8)]),
            ANTMessage(id: ANTMessageID.rfFrequency, payload: [channel, antPlusFrequency]),
            ANTMessage(id: ANTMessageID.enableExtendedMessages, payload: [0, 1]),
            ANTMessage(id: ANTMessageID.openChannel, payload: [channel]),
        ]
    }
}

/// A channel response or event (message 0x40): which channel, to which message (1 for an
/// RF event), and the code (0 = no error).
public struct ChannelResponse: Sendable, Hashable {
    public var channel: UInt8
    public var messageID: UInt8
    public var code: UInt8

    public init?(_ message: ANTMessage) {
        guard message.id == ANTMessageID.channelEvent, message.payload.count >= 3 else { return nil }
        channel = message.payload[0]
        messageID = message.payload[1]
        code = message.payload[2]
    }

    /// RESPONSE_NO_ERROR to a command.
    public var isSuccess: Bool { messageID != 1 && code == 0 }

    /// An RF event (search timeout, channel closed, …) rather than an answer to a command.
    public var isEvent: Bool { messageID == 1 }

    public static let searchTimeout: UInt8 = 0x01
    public static let receiveFailed: UInt8 = 0x02
    public static let channelClosed: UInt8 = 0x07
    public static let receiveFailGoToSearch: UInt8 = 0x08
    public static let channelInWrongState: UInt8 = 0x15
}
