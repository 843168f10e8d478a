import ANTDecoding
import Testing

@Suite("ANT messages and the stream decoder")
struct ANTFramingTests {
    @Test("the field guide's example: a channel response, no error, to set-network-key")
    func example() throws {
        let message = ANTMessage(id: 0x40, payload: [0x00, 0x46, 0x00])
        #expect(message.encoded() == [0xA4, 0x03, 0x40, 0x00, 0x46, 0x00, 0xA1])
        var decoder = ANTFrameDecoder()
        let decoded = decoder.feed([0xA4, 0x03, 0x40, 0x00, 0x46, 0x00, 0xA1])
        #expect(decoded == [message])
        let response = try #require(ChannelResponse(decoded[0]))
        #expect(response.isSuccess && !response.isEvent && response.messageID == 0x46)
    }

    static let stream: [ANTMessage] = [
        ANTMessage(id: 0x6F, payload: [0x20]),
        ANTMessage(id: 0x4E, payload: [0, 0x84, 0xFF, 0x0C, 0x3F, 0x34, 0x12, 0x07, 0x48]),
        ANTMessage(id: 0x40, payload: [0, 1, 0x01]),
        ANTMessage(id: 0x4E, payload: [1, 0x04, 0x00, 0x30, 0x34, 0x34, 0x16, 0x08, 0x49, 0x80, 0x39, 0x30, 0x78, 0x01]),
    ]

    var bytes: [UInt8] { Self.stream.flatMap { $0.encoded() } }

    @Test("the same messages fed all at once, byte by byte, and split at every position")
    func chunking() {
        var whole = ANTFrameDecoder()
        #expect(whole.feed(bytes) == Self.stream)
        var single = ANTFrameDecoder()
        #expect(bytes.flatMap { single.feed([$0]) } == Self.stream)
        for split in 0...bytes.count {
            var decoder = ANTFrameDecoder()
            let messages = decoder.feed(bytes[..<split]) + decoder.feed(bytes[split...])
            #expect(messages == Self.stream, "split at \(split)")
            #expect(decoder.droppedBytes == 0 && decoder.badChecksums == 0)
        }
    }

    @Test("garbage (including stray A4 bytes) and bad checksums are skipped and counted")
    func resynchronisation() {
        var corrupted = Self.stream[1].encoded()
        corrupted[5] ^= 0xFF
        let input: [UInt8] = [0x00, 0x13, 0xA4, 0xFF] + Self.stream[0].encoded() + corrupted + [0xA4] + Self.stream[2].encoded()
            + Self.stream[3].encoded()
        var decoder = ANTFrameDecoder()
        var messages = decoder.feed(input)
        messages += decoder.feed(Self.stream[0].encoded())
        #expect(messages == [Self.stream[0], Self.stream[2], Self.stream[3], Self.stream[0]])
        #expect(decoder.badChecksums >= 1)
        #expect(decoder.droppedBytes > 0)
    }

    @Test("a long random stream never traps the decoder")
    func randomStream() {
        var state: UInt64 = 7
        var decoder = ANTFrameDecoder()
        var count = 0
        for _ in 0..<2000 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let chunk = (0..<Int(state >> 60)).map { index in UInt8(truncatingIfNeeded: state >> (index * 4)) }
            count += decoder.feed(chunk + (state & 1 == 0 ? Self.stream[1].encoded() : [])).count
        }
        #expect(count > 500)
    }

    @Test("the HRM receive channel set-up, byte for byte")
    func setup() {
        let key: [UInt8] = [1, 2, 3, 4, 5, 6, 7, 8]
        let messages = ANTChannelSetup.heartRateReceiveChannel(channel: 0, networkKey: key)
        #expect(messages.map(\.id) == [0x46, 0x42, 0x51, 0x43, 0x45, 0x66, 0x4B])
        #expect(messages[2].payload == [0, 0, 0, 120, 0])
        let periodChecksum: UInt8 = 0xA4 ^ 0x03 ^ 0x43 ^ 0x00 ^ 0x86 ^ 0x1F
        let period: [UInt8] = [0xA4, 0x03, 0x43, 0x00, 0x86, 0x1F, periodChecksum]
        #expect(messages[3].encoded() == period)
        #expect(messages[4].payload == [0, 57])
        #expect(ANTChannelSetup.reset.encoded() == [0xA4, 0x01, 0x4A, 0x00, 0xEF])
    }
}

@Suite("ANT+ heart-rate pages")
struct HeartRatePageTests {
    func page(_ number: UInt8, toggle: Bool, _ b1: UInt8 = 0, _ b2: UInt8 = 0, _ b3: UInt8 = 0, time: UInt16, count: UInt8, hr: UInt8) throws -> HeartRatePage {
        try HeartRatePage(data: [number | (toggle ? 0x80 : 0), b1, b2, b3, UInt8(time & 0xFF), UInt8(time >> 8), count, hr])
    }

    @Test("pages 0, 1, 2, 3, 4 and 7")
    func pages() throws {
        #expect(try page(0, toggle: false, time: 0x1234, count: 7, hr: 72).heartRate == 72)
        #expect(try page(1, toggle: true, 0x10, 0, 0, time: 0, count: 0, hr: 60).detail == .operatingTime(seconds: 32))
        #expect(try page(2, toggle: true, 1, 0x39, 0x30, time: 0, count: 0, hr: 60).detail == .manufacturer(id: 1, serialHigh: 12345))
        #expect(try page(3, toggle: true, 4, 5, 6, time: 0, count: 0, hr: 60).detail == .product(hardware: 4, software: 5, model: 6))
        #expect(try page(4, toggle: true, 0xFF, 0x00, 0x30, time: 0x3400, count: 9, hr: 60).detail == .previousBeat(0x3000))
        #expect(try page(7, toggle: true, 85, 0, 0, time: 0, count: 0, hr: 60).detail == .battery(level: 85))
        #expect(throws: ANTError.self) { try HeartRatePage(data: [0, 1, 2]) }
    }

    @Test("broadcast data with and without the extended device id")
    func broadcast() throws {
        let plain = try BroadcastData(ANTFramingTests.stream[1])
        #expect(plain.channel == 0 && plain.data.count == 8 && plain.deviceNumber == nil)
        let extended = try BroadcastData(ANTFramingTests.stream[3])
        #expect(extended.channel == 1 && extended.deviceNumber == 12345 && extended.deviceType == 120)
        #expect(throws: ANTError.notBroadcast(0x40)) { try BroadcastData(ANTFramingTests.stream[2]) }
    }

    @Test("RR only when the count advances by one, across the count and time wraps")
    func rrFromCounts() throws {
        var tracker = HeartBeatTracker()
        #expect(tracker.rrIntervals(for: try page(0, toggle: false, time: 64_000, count: 254, hr: 60)).isEmpty)
        #expect(tracker.rrIntervals(for: try page(0, toggle: false, time: 64_000, count: 254, hr: 60)).isEmpty)  // same beat
        #expect(tracker.rrIntervals(for: try page(0, toggle: false, time: 65_024, count: 255, hr: 60)) == [1024])
        // Count wraps 255 → 0 and time wraps at 65536.
        #expect(tracker.rrIntervals(for: try page(0, toggle: false, time: 512, count: 0, hr: 60)) == [1024])
        // A skipped beat (count +2): no interval.
        #expect(tracker.rrIntervals(for: try page(0, toggle: false, time: 2560, count: 2, hr: 60)).isEmpty)
    }

    @Test("page 4 gives the interval itself once the strap's toggle bit flips; junk page bytes do not")
    func rrFromPageFour() throws {
        var tracker = HeartBeatTracker()
        _ = tracker.rrIntervals(for: try page(4, toggle: false, 0, 0x00, 0x10, time: 0x1400, count: 1, hr: 60))
        #expect(tracker.rrIntervals(for: try page(4, toggle: true, 0, 0x00, 0x14, time: 0x1800, count: 3, hr: 60)) == [0x400])
        var old = HeartBeatTracker()  // an old strap: the page byte never toggles
        _ = old.rrIntervals(for: try page(4, toggle: false, 0, 0x00, 0x10, time: 0x1400, count: 1, hr: 60))
        #expect(old.rrIntervals(for: try page(4, toggle: false, 0, 0x00, 0x14, time: 0x1800, count: 3, hr: 60)).isEmpty)
        #expect(!old.pagesAreReliable)
    }
}
