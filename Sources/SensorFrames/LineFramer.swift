/// Splits a byte stream into lines at `\n`, whatever the chunks it arrives in: fed byte by
/// byte, several lines per chunk, or split anywhere, it gives the same lines. A line longer
/// than ``maximumLength`` is garbage (a wrong baud rate, binary noise): it is dropped and
/// counted, and framing picks up at the next newline.
public struct LineFramer: Sendable {
    /// The longest line kept, newline excluded.
    public let maximumLength: Int
    /// Lines dropped for being too long.
    public private(set) var overlongLines = 0
    private var buffer: [UInt8] = []
    private var discarding = false

    public init(maximumLength: Int = 256) {
        self.maximumLength = maximumLength
    }

    /// The whole lines `bytes` completes, without their `\n` (a `\r` before it is removed too).
    public mutating func feed(_ bytes: some Collection<UInt8>) -> [[UInt8]] {
        var lines: [[UInt8]] = []
        for byte in bytes {
            if byte == UInt8(ascii: "\n") {
                if !discarding {
                    if buffer.last == UInt8(ascii: "\r") { buffer.removeLast() }
                    lines.append(buffer)
                }
                buffer.removeAll(keepingCapacity: true)
                discarding = false
            } else if !discarding {
                buffer.append(byte)
                if buffer.count > maximumLength {
                    overlongLines += 1
                    discarding = true
                    buffer.removeAll(keepingCapacity: true)
                }
            }
        }
        return lines
    }
}
