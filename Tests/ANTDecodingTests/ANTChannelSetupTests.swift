import ANTDecoding
import Testing

@Suite("Opening an ANT+ heart-rate receive channel")
struct ANTChannelSetupTests {
    @Test("the ANT+ network key is the published one")
    func networkKey() {
        #expect(ANTChannelSetup.antPlusNetworkKey == [0xB9, 0xA5, 0x21, 0xFB, 0xBD, 0x72, 0xC3, 0x45])
    }

    @Test("channel 0, any strap: the frames match hand-computed bytes")
    func channelZeroFrames() {
        let frames = ANTChannelSetup.heartRateReceiveChannel(channel: 0, networkKey: ANTChannelSetup.antPlusNetworkKey).map { $0.encoded() }
        let expected: [[UInt8]] = [
            [0xA4, 0x09, 0x46, 0x00, 0xB9, 0xA5, 0x21, 0xFB, 0xBD, 0x72, 0xC3, 0x45, 0x64],  // network 0 key
            [0xA4, 0x03, 0x42, 0x00, 0x00, 0x00, 0xE5],  // assign: channel 0, receive, network 0
            [0xA4, 0x05, 0x51, 0x00, 0x00, 0x00, 0x78, 0x00, 0x88],  // id: any device, type 120, transmission 0
            [0xA4, 0x03, 0x43, 0x00, 0x86, 0x1F, 0x7D],  // period 8070 = 0x1F86
            [0xA4, 0x02, 0x45, 0x00, 0x39, 0xDA],  // 2457 MHz
            [0xA4, 0x02, 0x66, 0x00, 0x01, 0xC1],  // extended messages on
            [0xA4, 0x01, 0x4B, 0x00, 0xEE],  // open
        ]
        #expect(frames == expected)
        #expect(ANTMessage.reset.encoded() == [0xA4, 0x01, 0x4A, 0x00, 0xEF])
    }

    @Test("channel 3 paired with strap 12345")
    func pairedChannel() {
        let messages = ANTChannelSetup.heartRateReceiveChannel(channel: 3, deviceNumber: 12345, networkKey: ANTChannelSetup.antPlusNetworkKey)
        #expect(messages.map(\.id) == [0x46, 0x42, 0x51, 0x43, 0x45, 0x66, 0x4B])
        #expect(messages[0].payload.first == 0)  // the key goes to network 0 whatever the channel
        #expect(messages[2].encoded() == [0xA4, 0x05, 0x51, 0x03, 0x39, 0x30, 0x78, 0x00, 0x82])
        #expect(messages[1].payload == [3, 0, 0])
        #expect(messages[3].payload == [3, 0x86, 0x1F])
        #expect(messages[4].payload == [3, 57])
        #expect(messages[6].payload == [3])
        #expect(ANTMessage.closeChannel(3).encoded() == [0xA4, 0x01, 0x4C, 0x03, 0xEA])
    }

    @Test("each command's success answer is recognised, from the bytes the stick sends")
    func successAnswers() throws {
        for command in ANTChannelSetup.heartRateReceiveChannel(channel: 5, networkKey: ANTChannelSetup.antPlusNetworkKey) {
            let channelByte = command.id == ANTMessageID.networkKey || command.id == ANTMessageID.enableExtendedMessages ? 0 : 5
            var decoder = ANTFrameDecoder()
            let frame = ANTMessage(id: 0x40, payload: [UInt8(channelByte), command.id, 0x00]).encoded()
            let reply = try #require(decoder.feed(frame).first)
            #expect(try ANTChannelSetup.check(reply, answers: command), "\(command)")
        }
        #expect(try ANTChannelSetup.check(ANTMessageTests.decodedExample(), answers: .setNetworkKey(ANTChannelSetup.antPlusNetworkKey)))
        // A reset is answered by a startup message, whatever its reason byte.
        #expect(try ANTChannelSetup.check(ANTMessage(id: ANTMessageID.startup, payload: [0x20]), answers: .reset))
        #expect(try !ANTChannelSetup.check(ANTMessageTests.decodedExample(), answers: .reset))
    }

    @Test("an error code answering the command throws it")
    func refusedCommand() {
        let open = ANTMessage.openChannel(0)
        let wrongState = ChannelResponse(channel: 0, messageID: ANTMessageID.openChannel, code: .channelInWrongState).message
        #expect(throws: ANTError.commandFailed(command: 0x4B, channel: 0, code: .channelInWrongState)) {
            try ANTChannelSetup.check(wrongState, answers: open)
        }
        let badKey = ChannelResponse(channel: 0, messageID: ANTMessageID.networkKey, code: .invalidNetworkNumber).message
        #expect(throws: ANTError.commandFailed(command: 0x46, channel: 0, code: .invalidNetworkNumber)) {
            try ANTChannelSetup.check(badKey, answers: .setNetworkKey(ANTChannelSetup.antPlusNetworkKey))
        }
    }

    @Test("messages that do not answer the command are not taken for its answer")
    func unrelatedReplies() throws {
        let open = ANTMessage.openChannel(2)
        let unrelated: [ANTMessage] = [
            try ANTMessage(frame: RealCapture.frames[0]),  // broadcast on channel 2
            try ANTMessage(frame: RealCapture.frames[4]),  // RF event (collision) on channel 2
            ChannelResponse(channel: 2, messageID: ANTMessageID.rfEvent, code: .channelClosed).message,
            ChannelResponse(channel: 1, messageID: ANTMessageID.openChannel, code: .noError).message,  // another channel
            ChannelResponse(channel: 1, messageID: ANTMessageID.openChannel, code: .channelInWrongState).message,
            ChannelResponse(channel: 2, messageID: ANTMessageID.channelPeriod, code: .noError).message,  // another command
            ANTMessage(id: ANTMessageID.startup, payload: [0]),
            ANTMessage(id: ANTMessageID.channelEvent, payload: [2, 0x4B]),  // too short to be a response
        ]
        for reply in unrelated {
            #expect(try !ANTChannelSetup.check(reply, answers: open), "\(reply)")
        }
        #expect(try ANTChannelSetup.check(ChannelResponse(channel: 2, messageID: 0x4B, code: .noError).message, answers: open))
    }
}

@Suite("Channel responses and events")
struct ChannelResponseTests {
    @Test("a real collision event is an event, not a success")
    func realEvent() throws {
        let response = try #require(ChannelResponse(try ANTMessage(frame: RealCapture.frames[4])))
        #expect(response.channel == 2)
        #expect(response.isEvent)
        #expect(!response.isSuccess)
        #expect(response.code == .channelCollision)
        #expect(response.description == "channel 2: EVENT_CHANNEL_COLLISION (0x09)")
    }

    @Test("responses are classified by message id and code")
    func classification() {
        let cases: [(ChannelResponse, isEvent: Bool, isSuccess: Bool)] = [
            (ChannelResponse(channel: 0, messageID: 0x46, code: .noError), false, true),
            (ChannelResponse(channel: 0, messageID: 0x4B, code: .channelInWrongState), false, false),
            (ChannelResponse(channel: 0, messageID: 0x01, code: .rxSearchTimeout), true, false),
            (ChannelResponse(channel: 0, messageID: 0x01, code: .rxFail), true, false),
            (ChannelResponse(channel: 0, messageID: 0x01, code: .channelClosed), true, false),
            (ChannelResponse(channel: 0, messageID: 0x01, code: .noError), true, false),
        ]
        for (response, isEvent, isSuccess) in cases {
            #expect(response.isEvent == isEvent, "\(response)")
            #expect(response.isSuccess == isSuccess, "\(response)")
            #expect(ChannelResponse(response.message) == response)
        }
    }

    @Test("only 0x40 messages of at least 3 bytes are responses")
    func notResponses() {
        #expect(ChannelResponse(ANTMessage(id: 0x4E, payload: [0, 0x46, 0])) == nil)
        #expect(ChannelResponse(ANTMessage(id: 0x40, payload: [0, 0x46])) == nil)
        #expect(ChannelResponse(ANTMessage(id: 0x40, payload: [0, 0x46, 0, 9]))?.code == .noError)
    }

    @Test("codes carry their ANT names")
    func codeNames() {
        #expect(ANTEventCode.noError.description == "RESPONSE_NO_ERROR (0x00)")
        #expect(ANTEventCode.rxSearchTimeout.description == "EVENT_RX_SEARCH_TIMEOUT (0x01)")
        #expect(ANTEventCode.rxFail.name == "EVENT_RX_FAIL")
        #expect(ANTEventCode.channelClosed.rawValue == 0x07)
        #expect(ANTEventCode.channelInWrongState.rawValue == 0x15)
        #expect(ANTEventCode(rawValue: 0x99).name == nil)
        #expect(ANTEventCode(rawValue: 0x99).description == "code 0x99")
        #expect(ChannelResponse(channel: 1, messageID: 0x42, code: .noError).description == "channel 1, 0x42: RESPONSE_NO_ERROR (0x00)")
    }
}

extension ANTMessageTests {
    /// `A4 03 40 00 46 00 A1`, decoded.
    static func decodedExample() throws -> ANTMessage { try ANTMessage(frame: example) }
}
