/// Bytes that a decoder reads front to back, a record at a time: a whole file in memory, or a
/// window onto a file that is read as the decoder moves on, so that a recording of any size
/// is decoded in bounded memory.
///
/// A decoder asks for the bytes of each record in turn. Offsets never go back below the start
/// of the last read, so a source that reads a file need only keep the bytes from there on.
public protocol ByteSource {
    /// The size of the whole source in bytes, fixed when it was opened.
    var count: Int { get }

    /// The `length` bytes from `offset` on; fewer only where the source ends. The slice's
    /// indices are its own (count from its `startIndex`, not from `offset`), and it stays
    /// valid (it holds its bytes) however the source moves on.
    mutating func bytes(at offset: Int, length: Int) throws(ByteSourceError) -> ArraySlice<UInt8>
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

extension Array: ByteSource where Element == UInt8 {
    /// Slices the array: nothing is copied.
    public func bytes(at offset: Int, length: Int) -> ArraySlice<UInt8> {
        let start = Swift.min(Swift.max(offset, 0), count)
        return self[start..<start + Swift.min(length, count - start)]
    }
}
