@preconcurrency import Glibc
import ByteSources

/// A recording file read through a window that moves along it, as its decoder asks for the
/// next record: whatever the file's size, only the window (256 KiB, or one record when a
/// record is larger) is in memory. Reads use `pread`, so the descriptor's offset never moves;
/// copies of a source share the open file and each moves its own window, which lets a
/// decoder make a second pass, or read two streams of the file side by side.
///
/// The file's size is taken when it is opened: what is appended later is not read, and a
/// file cut shorter meanwhile ends where it now ends.
public struct FileByteSource: ByteSource {
    /// The open file, closed when the last source using it goes.
    private final class OpenFile {
        let descriptor: Int32
        init(_ descriptor: Int32) { self.descriptor = descriptor }
        deinit { close(descriptor) }
    }

    /// Bytes a window holds at least.
    static let windowSize = 256 * 1024

    private let file: OpenFile
    /// The file as messages name it.
    public let name: String
    public let count: Int
    private var window: [UInt8] = []
    /// The file offset of `window`'s first byte.
    private var windowStart = 0

    /// Opens the file at `path`.
    public init(path: String) throws(RecordingError) {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw Self.failure(path, errno) }
        try self.init(owning: descriptor, name: path)
    }

    /// Reads the file open as `descriptor` (a regular file) through a duplicate of it: the
    /// caller still owns and closes `descriptor`. `name` stands for the file in messages.
    public init(descriptor: Int32, name: String) throws(RecordingError) {
        let copy = fcntl(descriptor, F_DUPFD_CLOEXEC, 0)
        guard copy >= 0 else { throw Self.failure(name, errno) }
        try self.init(owning: copy, name: name)
    }

    private init(owning descriptor: Int32, name: String) throws(RecordingError) {
        file = OpenFile(descriptor)
        self.name = name
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw Self.failure(name, errno) }
        guard status.st_mode & S_IFMT == S_IFREG else {
            throw .unreadable(path: name, reason: "\(name): not a regular file", missing: false)
        }
        count = Int(status.st_size)
    }

    public mutating func bytes(at offset: Int, length: Int) throws(ByteSourceError) -> ArraySlice<UInt8> {
        let start = min(max(offset, 0), count)
        let wanted = min(max(length, 0), count - start)
        if start < windowStart || start + wanted > windowStart + window.count {
            try fill(from: start, atLeast: wanted)
        }
        let first = start - windowStart
        return window[first..<first + min(wanted, window.count - first)]
    }

    /// Moves the window to start at `start`, reading at least `wanted` bytes (fewer only
    /// when the file has been cut shorter since it was opened).
    private mutating func fill(from start: Int, atLeast wanted: Int) throws(ByteSourceError) {
        let size = min(max(wanted, Self.windowSize), count - start)
        if window.count != size { window = [UInt8](repeating: 0, count: size) }
        var filled = 0
        let descriptor = file.descriptor
        while filled < size {
            let result = window.withUnsafeMutableBytes { buffer in
                pread(descriptor, buffer.baseAddress! + filled, size - filled, off_t(start + filled))
            }
            if result < 0 {
                let error = errno
                if error == EINTR { continue }
                window = []
                throw ByteSourceError(offset: start + filled, errno: error, reason: String(cString: strerror(error)))
            }
            if result == 0 { break }
            filled += result
        }
        if filled < size { window.removeLast(size - filled) }
        windowStart = start
    }

    private static func failure(_ name: String, _ error: Int32) -> RecordingError {
        .unreadable(path: name, reason: "\(name): \(String(cString: strerror(error)))", missing: error == ENOENT)
    }
}
