/// Turns a byte stream from an ANT stick into messages, whatever the chunking: bytes may
/// arrive one at a time or many messages at once. Garbage before a sync byte and messages
/// whose checksum fails are skipped and counted; decoding resumes at the next sync byte
/// after the bad one.
public struct ANTFrameDecoder: Sendable {
    private var buffer: [UInt8] = []
    /// Bytes dropped while looking for a message.
    public private(set) var droppedBytes = 0
    /// Messages whose checksum did not match.
    public private(set) var badChecksums = 0
    /// The longest payload a message may have (ANT's is well under this).
    public static let maximumPayload = 64

    public init() {}

    /// Adds bytes and returns every whole message they complete, in order.
    public mutating func feed(_ bytes: some Collection<UInt8>) -> [ANTMessage] {
        buffer.append(contentsOf: bytes)
        var messages: [ANTMessage] = []
        var start = 0
        while true {
            // Find the next sync byte.
            guard let sync = buffer[start...].firstIndex(of: ANTMessage.sync) else {
                droppedBytes += buffer.count - start
                start = buffer.count
                break
            }
            droppedBytes += sync - start
            start = sync
            guard buffer.count - start >= 2 else { break }
            let length = Int(buffer[start + 1])
            guard length <= Self.maximumPayload else {
                // Not a real message start: skip this sync byte.
                droppedBytes += 1
                start += 1
                continue
            }
            let total = length + 4
            guard buffer.count - start >= total else { break }
            let frame = buffer[start..<(start + total)]
            if ANTMessage.checksum(frame.dropLast()) == frame.last {
                messages.append(ANTMessage(id: frame[start + 2], payload: Array(frame[(start + 3)..<(start + 3 + length)])))
                start += total
            } else {
                badChecksums += 1
                droppedBytes += 1
                start += 1
            }
        }
        buffer.removeFirst(start)
        return messages
    }
}
