/// Turns the byte stream from an ANT stick into messages, whatever the chunking: bytes may
/// arrive one at a time, split anywhere, or several messages at once, and the messages come
/// out the same.
///
/// Resynchronisation: bytes before a sync byte are dropped. A sync byte whose length byte is
/// 0 or above ``ANTMessage/maximumPayloadLength``, or whose frame fails its checksum, is
/// taken for garbage: that one byte is dropped and the search resumes at the next byte, so
/// a stray A4 never hides the frame after it. Every byte fed ends up in exactly one of: a
/// returned message, ``droppedBytes``, or ``bufferedByteCount`` (a frame still arriving).
/// The zero padding some USB sticks add after messages is counted as dropped.
public struct ANTFrameDecoder: Sendable {
    private var buffer: [UInt8] = []
    /// Bytes skipped while looking for a frame (garbage, false sync bytes, padding).
    public private(set) var droppedBytes = 0
    /// Candidate frames whose checksum did not match (each also drops its sync byte).
    public private(set) var badChecksums = 0

    /// Bytes held back because the frame they start has not fully arrived.
    public var bufferedByteCount: Int { buffer.count }

    /// A decoder with nothing buffered and nothing counted.
    public init() {}

    /// Adds `bytes` and returns every whole message they complete, in stream order.
    public mutating func feed(_ bytes: some Collection<UInt8>) -> [ANTMessage] {
        buffer.append(contentsOf: bytes)
        var messages: [ANTMessage] = []
        var start = 0
        while start < buffer.count {
            guard buffer[start] == ANTMessage.sync else {
                droppedBytes += 1
                start += 1
                continue
            }
            guard start + 1 < buffer.count else { break }  // the length byte is still to come
            let length = Int(buffer[start + 1])
            guard length >= 1, length <= ANTMessage.maximumPayloadLength else {
                droppedBytes += 1
                start += 1
                continue
            }
            let end = start + length + ANTMessage.frameOverhead
            guard end <= buffer.count else { break }  // the rest of the frame is still to come
            guard ANTMessage.checksum(buffer[start..<(end - 1)]) == buffer[end - 1] else {
                badChecksums += 1
                droppedBytes += 1
                start += 1
                continue
            }
            messages.append(ANTMessage(id: buffer[start + 2], payload: Array(buffer[(start + 3)..<(end - 1)])))
            start = end
        }
        buffer.removeSubrange(0..<start)
        return messages
    }

    /// Forgets a partly received frame (after a stick reset or reopening the port), counting
    /// its bytes as dropped; the counters are kept.
    public mutating func discardBuffered() {
        droppedBytes += buffer.count
        buffer.removeAll()
    }
}
