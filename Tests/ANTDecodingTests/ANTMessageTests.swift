import ANTDecoding
import TestSupport
import Testing

@Suite("One ANT message: framing and checksum")
struct ANTMessageTests {
    static let example: [UInt8] = [0xA4, 0x03, 0x40, 0x00, 0x46, 0x00, 0xA1]

    @Test("the field guide's example encodes to A4 03 40 00 46 00 A1")
    func encodeExample() {
        let message = ANTMessage(id: ANTMessageID.channelEvent, payload: [0x00, ANTMessageID.networkKey, 0x00])
        #expect(message.encoded() == Self.example)
    }

    @Test("the example decodes to a channel response, no error, to set-network-key")
    func decodeExample() throws {
        let message = try ANTMessage(frame: Self.example)
        #expect(message.id == 0x40)
        #expect(message.payload == [0x00, 0x46, 0x00])
        let response = try #require(ChannelResponse(message))
        #expect(response == ChannelResponse(channel: 0, messageID: 0x46, code: .noError))
        #expect(response.isSuccess)
    }

    @Test("the checksum is the XOR of every byte before it, sync included")
    func checksum() {
        #expect(ANTMessage.checksum([0xA4, 0x03, 0x40, 0x00, 0x46, 0x00]) == 0xA1)
        #expect(ANTMessage.checksum([]) == 0)
        #expect(ANTMessage.checksum([0xA4]) == 0xA4)
        #expect(ANTMessage.checksum([0xA4, 0x01, 0x4A, 0x00]) == 0xEF)
        for frame in RealCapture.frames {
            #expect(ANTMessage.checksum(frame.dropLast()) == frame.last)
        }
    }

    @Test("encode then decode gives the message back, for every length up to the maximum")
    func roundTrip() throws {
        var generator = SplitMix64(seed: 1)
        for length in 1...ANTMessage.maximumPayloadLength {
            let message = ANTMessage(
                id: UInt8.random(in: 0...255, using: &generator),
                payload: (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) })
            let frame = message.encoded()
            #expect(frame.count == length + ANTMessage.frameOverhead)
            #expect(frame[1] == UInt8(length))
            #expect(try ANTMessage(frame: frame) == message)
        }
    }

    @Test("real frames decode")
    func realFrames() throws {
        let broadcast = try ANTMessage(frame: RealCapture.frames[0])
        #expect(broadcast.id == ANTMessageID.broadcastData)
        #expect(broadcast.payload.count == 14)
        #expect(broadcast.encoded() == RealCapture.frames[0])
    }

    @Test("a frame that is not one throws the reason")
    func malformed() {
        #expect(throws: ANTError.notSync(nil)) { try ANTMessage(frame: []) }
        #expect(throws: ANTError.notSync(0xA5)) { try ANTMessage(frame: [0xA5, 0x03, 0x40, 0x00, 0x46, 0x00, 0xA1]) }
        #expect(throws: ANTError.frameLength(declared: 3, actual: 6)) { try ANTMessage(frame: Self.example.dropLast()) }
        #expect(throws: ANTError.frameLength(declared: 3, actual: 8)) { try ANTMessage(frame: Self.example + [0]) }
        #expect(throws: ANTError.frameLength(declared: nil, actual: 1)) { try ANTMessage(frame: [0xA4]) }
        var corrupted = Self.example
        corrupted[4] = 0x47
        #expect(throws: ANTError.badChecksum(expected: 0xA0, found: 0xA1)) { try ANTMessage(frame: corrupted) }
    }

    @Test("descriptions are one line and name the bytes")
    func descriptions() {
        #expect(ANTMessage(id: 0x40, payload: [0x00, 0x46, 0x0A]).description == "0x40 [00 46 0A]")
        let errors: [ANTError] = [
            .notSync(nil), .notSync(0x12), .frameLength(declared: 3, actual: 2), .frameLength(declared: nil, actual: 1),
            .badChecksum(expected: 1, found: 2), .notBroadcastData(messageID: 0x40),
            .payloadTooShort(messageID: 0x4E, count: 3, needed: 9), .pageLength(7),
            .commandFailed(command: 0x4B, channel: 0, code: .channelInWrongState),
        ]
        for error in errors {
            #expect(!error.description.isEmpty && !error.description.contains("\n"), "\(error)")
        }
        #expect(ANTError.badChecksum(expected: 0xA0, found: 0xA1).description == "ANT frame checksum is 0xA1, expected 0xA0")
        #expect(
            ANTError.commandFailed(command: 0x4B, channel: 0, code: .channelInWrongState).description
                == "ANT stick refused command 0x4B on channel 0: CHANNEL_IN_WRONG_STATE (0x15)")
    }
}
