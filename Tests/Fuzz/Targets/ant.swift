// libFuzzer target: a byte stream from an ANT+ USB stick, framed into messages; broadcast
// data read as heart-rate pages, with the beat tracker deriving RR intervals across them.
import ANTDecoding

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzANT(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    var framer = ANTFrameDecoder()
    var tracker = HeartBeatTracker()
    let stream = UnsafeBufferPointer(start: data, count: size)
    // Fed in uneven pieces, as a tty delivers them.
    var offset = 0
    var piece = 1
    while offset < size {
        let end = min(size, offset + piece)
        for message in framer.feed(stream[offset..<end]) {
            _ = message.encoded()
            guard message.payload.count >= 9 else { continue }
            let broadcast = BroadcastData(channel: message.payload[0], data: Array(message.payload[1..<9]))
            if let page = try? HeartRatePage(broadcast) {
                _ = tracker.trustedDetail(of: page)
                _ = tracker.rrIntervals(for: page)
            }
        }
        offset = end
        piece = piece % 7 + 1
    }
    return 0
}
