/// Bytes that a decoder reads front to back, a record at a time: a whole file in memory, or a
/// window onto a file that is refilled as the decoder moves on, so that a recording of any
/// size is decoded in bounded memory. The decoders never see where the bytes come from: a
/// source is made with the bytes, or with a function that reads more of them (the I/O stays
/// with whoever opened the file).
///
/// A decoder asks for the bytes of each record in turn, mostly inside the window; only when a
/// record runs past it is `fill` called, for the bytes from the record on.
public struct ByteSource {
    /// Reads at least `length` bytes from `offset` (fewer only where the file ends), and may
    /// read more: what it returns becomes the window.
    public typealias Fill = (_ offset: Int, _ length: Int) throws(ByteSourceError) -> [UInt8]

    /// The size of the whole source in bytes, fixed when it was opened.
    public let count: Int
    private let fill: Fill?
    private var window: [UInt8]
    /// The source offset of `window`'s first byte.
    private var windowStart = 0

    /// A source of bytes held in memory.
    public init(_ bytes: [UInt8]) {
        count = bytes.count
        window = bytes
        fill = nil
    }

    /// A source of `count` bytes that `fill` reads as they are asked for.
    public init(count: Int, fill: @escaping Fill) {
        self.count = count
        self.fill = fill
        window = []
    }

    /// The `length` bytes from `offset` on; fewer only where the source ends. The slice's
    /// indices are its own (count from its `startIndex`, not from `offset`), and it stays
    /// valid (it holds its bytes) however the source moves on.
    public mutating func bytes(at offset: Int, length: Int) throws(ByteSourceError) -> ArraySlice<UInt8> {
        let start = min(max(offset, 0), count)
        let wanted = min(max(length, 0), count - start)
        if start < windowStart || start + wanted > windowStart + window.count, let fill {
            window = try fill(start, wanted)
            windowStart = start
        }
        let first = min(max(start - windowStart, 0), window.count)
        return window[first..<first + min(wanted, window.count - first)]
    }
}

/// A read of a byte source that failed, with its errno.
public struct ByteSourceError: Error, Hashable, Sendable, CustomStringConvertible {
    /// Where the read began.
    public var offset: Int
    public var errno: Int32
    /// What the system says of `errno` (`strerror`), filled in by the source that failed.
    public var reason: String

    public init(offset: Int, errno: Int32, reason: String) {
        self.offset = offset
        self.errno = errno
        self.reason = reason
    }

    public var description: String { "read error at byte \(offset): \(reason)" }
}
