/// The messages that open an ANT+ heart-rate receive channel, and checking the stick's
/// answers to them.
///
/// After ``ANTMessage/reset`` (answered by a startup message) each command is answered by a
/// ``ChannelResponse`` naming it; feed every message read while waiting to
/// ``check(_:answers:)``. A stick has several channels (8 on common USB sticks): one strap
/// per channel, each opened with this sequence on its own channel number.
public enum ANTChannelSetup {
    /// The ANT+ managed network key, as published in openant (`devices/__init__.py`).
    public static let antPlusNetworkKey: [UInt8] = [0xB9, 0xA5, 0x21, 0xFB, 0xBD, 0x72, 0xC3, 0x45]
    /// ANT+ heart-rate monitors' device type.
    public static let heartRateDeviceType: UInt8 = 120
    /// The heart-rate channel period, 8070/32768 s (about 4.06 messages a second).
    public static let heartRateChannelPeriod: UInt16 = 8070
    /// The ANT+ RF channel: 2457 MHz.
    public static let antPlusFrequency: UInt8 = 57
    /// Channel type: bidirectional receive (slave).
    public static let bidirectionalReceive: UInt8 = 0x00
    /// Channels on common ANT USB sticks (ANTUSB2, ANTUSB-m).
    public static let stickChannelCount = 8

    /// The commands, in order, that open `channel` as an ANT+ heart-rate receiver: set the
    /// network key (network 0), assign the channel (bidirectional receive, network 0), set
    /// its id (`deviceNumber`, 0 = any strap; device type 120; transmission type 0), period
    /// 8070, RF frequency 57, extended messages on (so broadcasts name their strap), open.
    ///
    /// - Precondition: `networkKey` has 8 bytes.
    public static func heartRateReceiveChannel(channel: UInt8, deviceNumber: UInt16 = 0, networkKey: [UInt8]) -> [ANTMessage] {
        [
            .setNetworkKey(networkKey, network: 0),
            .assignChannel(channel, type: bidirectionalReceive, network: 0),
            .setChannelID(channel, deviceNumber: deviceNumber, deviceType: heartRateDeviceType, transmissionType: 0),
            .setChannelPeriod(channel, period: heartRateChannelPeriod),
            .setRFFrequency(channel, antPlusFrequency),
            .enableExtendedMessages(true),
            .openChannel(channel),
        ]
    }

    /// Whether `reply` is the stick's successful answer to `command`.
    ///
    /// A reset is answered by a startup message; every other command by a channel response
    /// with the command's id and, in the channel byte, the command's first payload byte.
    /// Anything else (broadcasts, RF events, answers to other commands or channels) returns
    /// false: not the answer, keep waiting.
    ///
    /// - Throws: ``ANTError/commandFailed(command:channel:code:)`` when `reply` answers
    ///   `command` with an error code.
    public static func check(_ reply: ANTMessage, answers command: ANTMessage) throws(ANTError) -> Bool {
        if command.id == ANTMessageID.reset { return reply.id == ANTMessageID.startup }
        guard let response = ChannelResponse(reply), !response.isEvent, response.messageID == command.id,
            response.channel == (command.payload.first ?? 0)
        else { return false }
        guard response.code == .noError else {
            throw .commandFailed(command: command.id, channel: response.channel, code: response.code)
        }
        return true
    }
}

extension ANTMessage {
    /// Reset system (0x4A); the stick answers with a startup message (0x6F).
    public static let reset = ANTMessage(id: ANTMessageID.reset, payload: [0])

    /// Set network key (0x46): `network` and its 8-byte key.
    ///
    /// - Precondition: `key` has 8 bytes.
    public static func setNetworkKey(_ key: [UInt8], network: UInt8 = 0) -> ANTMessage {
        precondition(key.count == 8, "an ANT network key has 8 bytes")
        return ANTMessage(id: ANTMessageID.networkKey, payload: [network] + key)
    }

    /// Assign channel (0x42): `channel` of `type` on `network`.
    public static func assignChannel(_ channel: UInt8, type: UInt8, network: UInt8 = 0) -> ANTMessage {
        ANTMessage(id: ANTMessageID.assignChannel, payload: [channel, type, network])
    }

    /// Set channel id (0x51): the device `channel` pairs with (0 fields are wildcards).
    public static func setChannelID(_ channel: UInt8, deviceNumber: UInt16, deviceType: UInt8, transmissionType: UInt8) -> ANTMessage {
        let number = littleEndian(deviceNumber)
        return ANTMessage(id: ANTMessageID.channelID, payload: [channel, number.low, number.high, deviceType, transmissionType])
    }

    /// Set channel period (0x43), in 1/32768 s.
    public static func setChannelPeriod(_ channel: UInt8, period: UInt16) -> ANTMessage {
        let bytes = littleEndian(period)
        return ANTMessage(id: ANTMessageID.channelPeriod, payload: [channel, bytes.low, bytes.high])
    }

    /// Set channel RF frequency (0x45), in MHz above 2400.
    public static func setRFFrequency(_ channel: UInt8, _ frequency: UInt8) -> ANTMessage {
        ANTMessage(id: ANTMessageID.rfFrequency, payload: [channel, frequency])
    }

    /// Enable (or disable) extended receive messages (0x66) for the whole stick: broadcasts
    /// then carry the sender's channel id after a flag byte.
    public static func enableExtendedMessages(_ enabled: Bool) -> ANTMessage {
        ANTMessage(id: ANTMessageID.enableExtendedMessages, payload: [0, enabled ? 1 : 0])
    }

    /// Open channel (0x4B).
    public static func openChannel(_ channel: UInt8) -> ANTMessage {
        ANTMessage(id: ANTMessageID.openChannel, payload: [channel])
    }

    /// Close channel (0x4C); answered, then followed by an EVENT_CHANNEL_CLOSED event.
    public static func closeChannel(_ channel: UInt8) -> ANTMessage {
        ANTMessage(id: ANTMessageID.closeChannel, payload: [channel])
    }

    /// Unassign channel (0x41).
    public static func unassignChannel(_ channel: UInt8) -> ANTMessage {
        ANTMessage(id: ANTMessageID.unassignChannel, payload: [channel])
    }
}

/// `value`'s two bytes, low first as ANT sends them.
private func littleEndian(_ value: UInt16) -> (low: UInt8, high: UInt8) {
    (UInt8(truncatingIfNeeded: value), UInt8(truncatingIfNeeded: value >> 8))
}
