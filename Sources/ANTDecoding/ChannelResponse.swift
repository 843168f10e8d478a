/// A channel response or RF event (message 0x40): `[channel, message id, code]`.
///
/// An answer to a command carries that command's id; an RF event (search timeout, receive
/// failure, channel closed, …) carries ``ANTMessageID/rfEvent`` (1) instead. For commands
/// that are not about a channel the "channel" byte echoes the command's first byte: the
/// network number for set-network-key, 0 for enable-extended-messages.
public struct ChannelResponse: Sendable, Hashable, CustomStringConvertible {
    /// The channel (or network number) the response is about.
    public var channel: UInt8
    /// The id of the command answered, or ``ANTMessageID/rfEvent`` for an RF event.
    public var messageID: UInt8
    /// What happened.
    public var code: ANTEventCode

    /// A response with these fields.
    public init(channel: UInt8, messageID: UInt8, code: ANTEventCode) {
        self.channel = channel
        self.messageID = messageID
        self.code = code
    }

    /// Reads a 0x40 message; nil for any other message or a payload under 3 bytes.
    public init?(_ message: ANTMessage) {
        guard message.id == ANTMessageID.channelEvent, message.payload.count >= 3 else { return nil }
        self.init(channel: message.payload[0], messageID: message.payload[1], code: ANTEventCode(rawValue: message.payload[2]))
    }

    /// An RF event rather than an answer to a command.
    public var isEvent: Bool { messageID == ANTMessageID.rfEvent }

    /// An answer to a command with RESPONSE_NO_ERROR.
    public var isSuccess: Bool { !isEvent && code == .noError }

    /// The message on the wire.
    public var message: ANTMessage {
        ANTMessage(id: ANTMessageID.channelEvent, payload: [channel, messageID, code.rawValue])
    }

    /// E.g. `channel 0: EVENT_RX_SEARCH_TIMEOUT (0x01)` or `channel 0, 0x46: RESPONSE_NO_ERROR (0x00)`.
    public var description: String {
        isEvent ? "channel \(channel): \(code)" : "channel \(channel), \(hexByte(messageID)): \(code)"
    }
}

/// A response or event code from a channel response (its third byte).
public struct ANTEventCode: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    /// The byte on the wire.
    public var rawValue: UInt8

    /// The code `rawValue`, named or not.
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// RESPONSE_NO_ERROR: the command was accepted.
    public static let noError = Self(rawValue: 0x00)
    /// EVENT_RX_SEARCH_TIMEOUT: the channel searched for its whole timeout and found nothing.
    public static let rxSearchTimeout = Self(rawValue: 0x01)
    /// EVENT_RX_FAIL: an expected message did not arrive in its slot.
    public static let rxFail = Self(rawValue: 0x02)
    /// EVENT_TX: a master channel sent its broadcast.
    public static let tx = Self(rawValue: 0x03)
    /// EVENT_TRANSFER_RX_FAILED: a burst or acknowledged receive failed.
    public static let transferRxFailed = Self(rawValue: 0x04)
    /// EVENT_TRANSFER_TX_COMPLETED.
    public static let transferTxCompleted = Self(rawValue: 0x05)
    /// EVENT_TRANSFER_TX_FAILED.
    public static let transferTxFailed = Self(rawValue: 0x06)
    /// EVENT_CHANNEL_CLOSED: the channel closed (after a close command or a search timeout).
    public static let channelClosed = Self(rawValue: 0x07)
    /// EVENT_RX_FAIL_GO_TO_SEARCH: the channel lost its device and searches again.
    public static let rxFailGoToSearch = Self(rawValue: 0x08)
    /// EVENT_CHANNEL_COLLISION: two channels wanted the same slot.
    public static let channelCollision = Self(rawValue: 0x09)
    /// EVENT_TRANSFER_TX_START.
    public static let transferTxStart = Self(rawValue: 0x0A)
    /// EVENT_TRANSFER_NEXT_DATA_BLOCK.
    public static let transferNextDataBlock = Self(rawValue: 0x11)
    /// CHANNEL_IN_WRONG_STATE: e.g. configuring a channel that is open.
    public static let channelInWrongState = Self(rawValue: 0x15)
    /// CHANNEL_NOT_OPENED.
    public static let channelNotOpened = Self(rawValue: 0x16)
    /// CHANNEL_ID_NOT_SET.
    public static let channelIDNotSet = Self(rawValue: 0x18)
    /// CLOSE_ALL_CHANNELS.
    public static let closeAllChannels = Self(rawValue: 0x19)
    /// TRANSFER_IN_PROGRESS.
    public static let transferInProgress = Self(rawValue: 0x1F)
    /// TRANSFER_SEQUENCE_NUMBER_ERROR.
    public static let transferSequenceNumberError = Self(rawValue: 0x20)
    /// TRANSFER_IN_ERROR.
    public static let transferInError = Self(rawValue: 0x21)
    /// MESSAGE_SIZE_EXCEEDS_LIMIT.
    public static let messageSizeExceedsLimit = Self(rawValue: 0x27)
    /// INVALID_MESSAGE: the command's bytes made no sense to the stick.
    public static let invalidMessage = Self(rawValue: 0x28)
    /// INVALID_NETWORK_NUMBER.
    public static let invalidNetworkNumber = Self(rawValue: 0x29)
    /// INVALID_LIST_ID.
    public static let invalidListID = Self(rawValue: 0x30)
    /// INVALID_SCAN_TX_CHANNEL.
    public static let invalidScanTxChannel = Self(rawValue: 0x31)
    /// INVALID_PARAMETER_PROVIDED.
    public static let invalidParameterProvided = Self(rawValue: 0x33)
    /// EVENT_SERIAL_QUE_OVERFLOW: the stick dropped messages to the host.
    public static let serialQueueOverflow = Self(rawValue: 0x34)
    /// EVENT_QUE_OVERFLOW.
    public static let queueOverflow = Self(rawValue: 0x35)
    /// ENCRYPT_NEGOTIATION_FAIL.
    public static let encryptNegotiationFail = Self(rawValue: 0x39)
    /// NVM_FULL_ERROR.
    public static let nvmFullError = Self(rawValue: 0x40)
    /// NVM_WRITE_ERROR.
    public static let nvmWriteError = Self(rawValue: 0x41)
    /// USB_STRING_WRITE_FAIL.
    public static let usbStringWriteFail = Self(rawValue: 0x70)
    /// MESG_SERIAL_ERROR_ID.
    public static let serialError = Self(rawValue: 0xAE)

    /// The ANT name, if the code has one.
    public var name: String? {
        switch self {
        case .noError: "RESPONSE_NO_ERROR"
        case .rxSearchTimeout: "EVENT_RX_SEARCH_TIMEOUT"
        case .rxFail: "EVENT_RX_FAIL"
        case .tx: "EVENT_TX"
        case .transferRxFailed: "EVENT_TRANSFER_RX_FAILED"
        case .transferTxCompleted: "EVENT_TRANSFER_TX_COMPLETED"
        case .transferTxFailed: "EVENT_TRANSFER_TX_FAILED"
        case .channelClosed: "EVENT_CHANNEL_CLOSED"
        case .rxFailGoToSearch: "EVENT_RX_FAIL_GO_TO_SEARCH"
        case .channelCollision: "EVENT_CHANNEL_COLLISION"
        case .transferTxStart: "EVENT_TRANSFER_TX_START"
        case .transferNextDataBlock: "EVENT_TRANSFER_NEXT_DATA_BLOCK"
        case .channelInWrongState: "CHANNEL_IN_WRONG_STATE"
        case .channelNotOpened: "CHANNEL_NOT_OPENED"
        case .channelIDNotSet: "CHANNEL_ID_NOT_SET"
        case .closeAllChannels: "CLOSE_ALL_CHANNELS"
        case .transferInProgress: "TRANSFER_IN_PROGRESS"
        case .transferSequenceNumberError: "TRANSFER_SEQUENCE_NUMBER_ERROR"
        case .transferInError: "TRANSFER_IN_ERROR"
        case .messageSizeExceedsLimit: "MESSAGE_SIZE_EXCEEDS_LIMIT"
        case .invalidMessage: "INVALID_MESSAGE"
        case .invalidNetworkNumber: "INVALID_NETWORK_NUMBER"
        case .invalidListID: "INVALID_LIST_ID"
        case .invalidScanTxChannel: "INVALID_SCAN_TX_CHANNEL"
        case .invalidParameterProvided: "INVALID_PARAMETER_PROVIDED"
        case .serialQueueOverflow: "EVENT_SERIAL_QUE_OVERFLOW"
        case .queueOverflow: "EVENT_QUE_OVERFLOW"
        case .encryptNegotiationFail: "ENCRYPT_NEGOTIATION_FAIL"
        case .nvmFullError: "NVM_FULL_ERROR"
        case .nvmWriteError: "NVM_WRITE_ERROR"
        case .usbStringWriteFail: "USB_STRING_WRITE_FAIL"
        case .serialError: "MESG_SERIAL_ERROR_ID"
        default: nil
        }
    }

    /// The name and the byte, e.g. `EVENT_CHANNEL_CLOSED (0x07)`, or `code 0x99`.
    public var description: String {
        name.map { "\($0) (\(hexByte(rawValue)))" } ?? "code \(hexByte(rawValue))"
    }
}
