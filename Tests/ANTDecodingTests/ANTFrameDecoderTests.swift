import ANTDecoding
import TestSupport
import Testing

/// What a decoder made of a whole stream.
struct DecodeOutcome: Equatable, CustomStringConvertible {
    var messages: [ANTMessage]
    var droppedBytes: Int
    var badChecksums: Int
    var bufferedByteCount: Int

    var description: String {
        "\(messages.count) messages, \(droppedBytes) dropped, \(badChecksums) bad checksums, \(bufferedByteCount) buffered"
    }

    /// Feeds `chunks` in order to a new decoder.
    init(chunks: some Sequence<ArraySlice<UInt8>>) {
        var decoder = ANTFrameDecoder()
        messages = []
        for chunk in chunks { messages += decoder.feed(chunk) }
        droppedBytes = decoder.droppedBytes
        badChecksums = decoder.badChecksums
        bufferedByteCount = decoder.bufferedByteCount
    }

    init(messages: [ANTMessage], droppedBytes: Int = 0, badChecksums: Int = 0, bufferedByteCount: Int = 0) {
        self.messages = messages
        self.droppedBytes = droppedBytes
        self.badChecksums = badChecksums
        self.bufferedByteCount = bufferedByteCount
    }
}

/// `bytes` cut before each of `cuts` (ascending offsets).
func chunks(_ bytes: [UInt8], cutAt cuts: [Int]) -> [ArraySlice<UInt8>] {
    var result: [ArraySlice<UInt8>] = []
    var start = 0
    for cut in cuts + [bytes.count] {
        result.append(bytes[start..<cut])
        start = cut
    }
    return result
}

/// In the manner of swift-nio's ByteToMessageDecoderVerifier: the same outcome (messages and
/// counters) whether `bytes` arrive all at once, byte by byte, in fixed-size chunks of
/// several messages, cut at every position, cut at every pair of positions, or in random chunks.
func verifyEveryChunking(_ bytes: [UInt8], expecting expected: DecodeOutcome, sourceLocation: SourceLocation = #_sourceLocation) {
    var chunkings: [(String, [ArraySlice<UInt8>])] = [
        ("all at once", [bytes[...]]),
        ("byte by byte", bytes.indices.map { bytes[$0...$0] }),
        ("with empty chunks", [[], bytes[...], []]),
    ]
    for size in [2, 3, 5, 7, 16, 40] {
        chunkings.append(("chunks of \(size)", chunks(bytes, cutAt: Array(stride(from: size, to: bytes.count, by: size)))))
    }
    for cut in 0...bytes.count {
        chunkings.append(("cut at \(cut)", chunks(bytes, cutAt: [cut])))
    }
    if bytes.count <= 80 {
        for first in 0...bytes.count {
            for second in first...bytes.count {
                chunkings.append(("cut at \(first) and \(second)", chunks(bytes, cutAt: [first, second])))
            }
        }
    }
    var generator = SplitMix64(seed: UInt64(bytes.count))
    for trial in 0..<20 {
        var cuts: [Int] = []
        var offset = 0
        while true {
            offset += Int.random(in: 0...12, using: &generator)
            guard offset < bytes.count else { break }
            cuts.append(offset)
        }
        chunkings.append(("random chunks #\(trial)", chunks(bytes, cutAt: cuts)))
    }
    for (name, chunking) in chunkings {
        let outcome = DecodeOutcome(chunks: chunking)
        #expect(outcome == expected, "\(name)", sourceLocation: sourceLocation)
    }
}

@Suite("The stream decoder")
struct ANTFrameDecoderTests {
    /// Messages of several kinds and lengths, including payload bytes equal to A4.
    static let messages: [ANTMessage] = [
        ANTMessage(id: ANTMessageID.startup, payload: [0x20]),
        ANTMessage(id: ANTMessageID.channelEvent, payload: [0x00, 0x46, 0x00]),
        ANTMessage(id: ANTMessageID.broadcastData, payload: [0x00, 0x04, 0xA4, 0xA4, 0x30, 0xA4, 0x34, 0x16, 0x48]),
        ANTMessage(id: ANTMessageID.channelEvent, payload: [0x03, 0x01, 0x07]),
        ANTMessage(id: 0xA4, payload: [0xA4]),
        ANTMessage(id: ANTMessageID.broadcastData, payload: Array(repeating: 0x41, count: ANTMessage.maximumPayloadLength)),
    ]

    static var bytes: [UInt8] { messages.flatMap { $0.encoded() } }

    @Test("clean messages come out the same however the bytes are chunked")
    func cleanStream() {
        verifyEveryChunking(Self.bytes, expecting: DecodeOutcome(messages: Self.messages))
    }

    @Test("a real capture comes out whole however it is chunked")
    func realCapture() throws {
        let expected = try RealCapture.frames.map { try ANTMessage(frame: $0) }
        verifyEveryChunking(RealCapture.bytes, expecting: DecodeOutcome(messages: expected))
    }

    @Test("a frame still arriving is held back, not dropped")
    func partialFrame() {
        let frame = Self.messages[2].encoded()
        var decoder = ANTFrameDecoder()
        #expect(decoder.feed(frame.dropLast()).isEmpty)
        #expect(decoder.bufferedByteCount == frame.count - 1)
        #expect(decoder.droppedBytes == 0)
        #expect(decoder.feed([frame.last!]) == [Self.messages[2]])
        #expect(decoder.bufferedByteCount == 0)
    }

    @Test("garbage before a frame is dropped and counted")
    func leadingGarbage() {
        let garbage: [UInt8] = [0x00, 0x13, 0xFF, 0x4E, 0x00]
        verifyEveryChunking(garbage + Self.bytes, expecting: DecodeOutcome(messages: Self.messages, droppedBytes: 5))
    }

    @Test("a garbage A4 before a frame is dropped and the frame still found")
    func strayA4() {
        // The stray A4 reads the real sync byte A4 as its length: over 41, so not a frame.
        verifyEveryChunking([0xA4] + Self.bytes, expecting: DecodeOutcome(messages: Self.messages, droppedBytes: 1))
        // Two stray A4s between frames.
        let first = Self.messages[0].encoded()
        let rest = Self.messages.dropFirst().flatMap { $0.encoded() }
        verifyEveryChunking(first + [0xA4, 0xA4] + rest, expecting: DecodeOutcome(messages: Self.messages, droppedBytes: 2))
    }

    @Test("a garbage A4 with a plausible length fails its checksum and the frame inside it is still found")
    func strayA4WithLength() {
        // A4 03 | A4 03 40 00 46 00 A1: the false frame A4 03 A4 03 40 00 46 fails its checksum
        // (0x40, not 0x46); its A4 and then 03 are dropped, and the real frame follows.
        let input: [UInt8] = [0xA4, 0x03] + ANTMessageTests.example
        let expected = DecodeOutcome(messages: [Self.messages[1]], droppedBytes: 2, badChecksums: 1)
        verifyEveryChunking(input, expecting: expected)
    }

    @Test("a frame with a bad checksum between good frames is skipped and counted")
    func badChecksumBetweenFrames() {
        var corrupted = Self.messages[1].encoded()  // A4 03 40 00 46 00 A1: no other A4
        corrupted[5] ^= 0x10
        let input = Self.messages[0].encoded() + corrupted + Self.messages[3].encoded()
        let expected = DecodeOutcome(messages: [Self.messages[0], Self.messages[3]], droppedBytes: corrupted.count, badChecksums: 1)
        verifyEveryChunking(input, expecting: expected)
    }

    @Test("a zero or over-long length byte is not a frame")
    func impossibleLengths() {
        let input: [UInt8] = [0xA4, 0x00, 0x4E] + Self.messages[0].encoded() + [0xA4, 42] + Self.messages[1].encoded()
        let expected = DecodeOutcome(messages: [Self.messages[0], Self.messages[1]], droppedBytes: 5)
        verifyEveryChunking(input, expecting: expected)
    }

    @Test("a truncated frame followed by good ones: the good ones are found once the false frame is ruled out")
    func truncatedFrame() throws {
        // A broadcast cut after 5 bytes, then the real capture: the cut frame swallows the
        // first real frame's bytes until its checksum fails; decoding resumes inside them.
        let cut = Array(Self.messages[2].encoded().prefix(5))
        let outcome = DecodeOutcome(chunks: [(cut + RealCapture.bytes)[...]])
        #expect(outcome.badChecksums >= 1)
        #expect(outcome.messages.count >= RealCapture.frames.count - 1)
        let expectedTail = try RealCapture.frames.dropFirst().map { try ANTMessage(frame: $0) }
        #expect(Array(outcome.messages.suffix(RealCapture.frames.count - 1)) == expectedTail)
        verifyEveryChunking(cut + RealCapture.bytes, expecting: outcome)
    }

    @Test("every byte is accounted for: in a message, dropped, or buffered")
    func accounting() {
        var generator = SplitMix64(seed: 7)
        let garbage = (0..<500).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let input = garbage + Self.bytes + garbage + [0xA4, 0x09, 0x4E]
        let outcome = DecodeOutcome(chunks: [input[...]])
        let decodedBytes = outcome.messages.reduce(0) { $0 + $1.encoded().count }
        #expect(decodedBytes + outcome.droppedBytes + outcome.bufferedByteCount == input.count)
        #expect(outcome.bufferedByteCount == 3)
        #expect(Array(outcome.messages.suffix(Self.messages.count)) == Self.messages)
    }

    @Test("discarding a partial frame counts it as dropped and starts clean")
    func discardBuffered() {
        var decoder = ANTFrameDecoder()
        _ = decoder.feed([0xA4, 0x09, 0x4E, 0x00])
        decoder.discardBuffered()
        #expect(decoder.bufferedByteCount == 0)
        #expect(decoder.droppedBytes == 4)
        #expect(decoder.feed(ANTMessageTests.example) == [Self.messages[1]])
    }

    @Test("a long randomized stream of garbage and frames: no trap, bounded buffer, nearly every frame recovered")
    func randomizedStream() {
        var generator = SplitMix64(seed: 2024)
        var input: [UInt8] = []
        var sent: [ANTMessage] = []
        for _ in 0..<3000 {
            let garbageCount = Int.random(in: 0...12, using: &generator)
            input += (0..<garbageCount).map { _ in UInt8.random(in: 0...255, using: &generator) }
            for _ in 0..<Int.random(in: 1...3, using: &generator) {
                let length = Int.random(in: 1...14, using: &generator)
                let message = ANTMessage(
                    id: UInt8.random(in: 0...255, using: &generator),
                    payload: (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) })
                sent.append(message)
                input += message.encoded()
            }
        }
        var decoder = ANTFrameDecoder()
        var received: [ANTMessage] = []
        var offset = 0
        while offset < input.count {
            let end = min(input.count, offset + Int.random(in: 1...64, using: &generator))
            received += decoder.feed(input[offset..<end])
            #expect(decoder.bufferedByteCount < ANTMessage.maximumPayloadLength + ANTMessage.frameOverhead)
            offset = end
        }
        // Chunking does not matter.
        var whole = ANTFrameDecoder()
        #expect(whole.feed(input) == received)
        // Every byte accounted for.
        let decodedBytes = received.reduce(0) { $0 + $1.encoded().count }
        #expect(decodedBytes + decoder.droppedBytes + decoder.bufferedByteCount == input.count)
        // Nearly every frame recovered; false frames from garbage are rare.
        var unmatched = [ANTMessage: Int]()
        for message in sent { unmatched[message, default: 0] += 1 }
        var recovered = 0
        var spurious = 0
        for message in received {
            if let count = unmatched[message], count > 0 {
                unmatched[message] = count - 1
                recovered += 1
            } else {
                spurious += 1
            }
        }
        #expect(recovered * 100 >= sent.count * 95, "recovered \(recovered) of \(sent.count)")
        #expect(spurious * 100 <= sent.count, "\(spurious) spurious messages")
        #expect(decoder.droppedBytes > 0 && decoder.badChecksums > 0)
    }

    @Test("pure noise never traps the decoder and is all dropped or buffered")
    func noise() {
        var generator = SplitMix64(seed: 99)
        var decoder = ANTFrameDecoder()
        var decodedBytes = 0
        var fed = 0
        for _ in 0..<2000 {
            // Biased towards A4 and small lengths to exercise false frames.
            let favoured: [UInt8] = [0xA4, 0x01, 0x03, 0x09]
            let chunk = (0..<Int.random(in: 0...100, using: &generator)).map { _ in
                Bool.random(using: &generator)
                    ? favoured.randomElement(using: &generator)! : UInt8.random(in: 0...255, using: &generator)
            }
            fed += chunk.count
            decodedBytes += decoder.feed(chunk).reduce(0) { $0 + $1.encoded().count }
        }
        #expect(decodedBytes + decoder.droppedBytes + decoder.bufferedByteCount == fed)
        #expect(decoder.badChecksums > 0)
    }
}
