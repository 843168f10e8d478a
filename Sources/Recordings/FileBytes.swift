@preconcurrency import Glibc
import ByteSources

/// Recording files as byte sources read through a window that moves along the file as its
/// decoder asks for the next record: whatever the file's size, only the window (256 KiB, or
/// one record when a record is larger) is in memory. Reads use `pread`, so the descriptor's
/// offset never moves; copies of a source share the open file and each moves its own window,
/// which lets a decoder make a second pass, or read two streams of the file side by side.
///
/// The file's size is taken when it is opened: what is appended later is not read, and a
/// file cut shorter meanwhile ends where it now ends.
public enum FileBytes {
    /// Bytes a window holds at least.
    public static let windowSize = 256 * 1024

    /// The open file, closed when the last source using it goes.
    private final class OpenFile: @unchecked Sendable {
        let descriptor: Int32
        init(_ descriptor: Int32) { self.descriptor = descriptor }
        deinit { close(descriptor) }

        /// At least `length` bytes from `offset` (`window` when that is more), fewer only
        /// where the file ends.
        func read(at offset: Int, length: Int, window: Int, count: Int) throws(ByteSourceError) -> [UInt8] {
            let size = min(max(length, window), max(count - offset, 0))
            var bytes = [UInt8](repeating: 0, count: size)
            var filled = 0
            while filled < size {
                let result = bytes.withUnsafeMutableBytes { buffer in
                    pread(descriptor, buffer.baseAddress! + filled, size - filled, off_t(offset + filled))
                }
                if result < 0 {
                    let error = errno
                    if error == EINTR { continue }
                    throw ByteSourceError(offset: offset + filled, errno: error, reason: String(cString: strerror(error)))
                }
                if result == 0 { break }
                filled += result
            }
            if filled < size { bytes.removeLast(size - filled) }
            return bytes
        }
    }

    /// The file at `path`, read `windowSize` bytes at a time.
    public static func open(path: String, windowSize: Int = windowSize) throws(RecordingError) -> ByteSource {
        let descriptor = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw failure(path, errno) }
        return try source(owning: descriptor, name: path, windowSize: windowSize)
    }

    /// The file open as `descriptor` (a regular file), read through a duplicate of it: the
    /// caller still owns and closes `descriptor`. `name` stands for the file in messages.
    public static func open(descriptor: Int32, name: String, windowSize: Int = windowSize) throws(RecordingError) -> ByteSource {
        let copy = fcntl(descriptor, F_DUPFD_CLOEXEC, 0)
        guard copy >= 0 else { throw failure(name, errno) }
        return try source(owning: copy, name: name, windowSize: windowSize)
    }

    private static func source(owning descriptor: Int32, name: String, windowSize: Int) throws(RecordingError) -> ByteSource {
        let file = OpenFile(descriptor)
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw failure(name, errno) }
        guard status.st_mode & S_IFMT == S_IFREG else {
            throw .unreadable(path: name, reason: "\(name): not a regular file", missing: false)
        }
        let count = Int(status.st_size)
        return ByteSource(count: count) { (offset, length) throws(ByteSourceError) in
            try file.read(at: offset, length: length, window: windowSize, count: count)
        }
    }

    private static func failure(_ name: String, _ error: Int32) -> RecordingError {
        .unreadable(path: name, reason: "\(name): \(String(cString: strerror(error)))", missing: error == ENOENT)
    }
}
