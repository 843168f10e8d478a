@preconcurrency import Glibc

/// Reads a file line by line with `getline`, without holding it in memory. Each libc call is
/// checked once here; errors carry the errno.
final class LineReader {
    /// A failure to open or read, with its errno.
    struct Failure: Error, CustomStringConvertible {
        var path: String
        var errno: Int32
        var description: String { "\(path): \(String(cString: strerror(errno)))" }
    }

    private let file: UnsafeMutablePointer<FILE>
    private var buffer: UnsafeMutablePointer<CChar>?
    private var capacity = 0
    let path: String
    /// The 1-based number of the line last returned.
    private(set) var lineNumber = 0
    /// Bytes consumed so far, newlines included.
    private(set) var bytesRead = 0

    init(path: String) throws(Failure) {
        guard let file = fopen(path, "re") else { throw Failure(path: path, errno: errno) }
        self.file = file
        self.path = path
    }

    /// The next line without its newline, or nil at the end.
    func next() throws(Failure) -> String? {
        guard let bytes = try nextBytes() else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The next line's bytes without its newline, or nil at the end. The bytes are valid
    /// until the next call.
    func nextBytes() throws(Failure) -> UnsafeBufferPointer<UInt8>? {
        errno = 0
        let count = getline(&buffer, &capacity, file)
        guard count >= 0 else {
            if ferror(file) != 0 { throw Failure(path: path, errno: errno) }
            return nil
        }
        lineNumber += 1
        bytesRead += count
        var length = count
        if length > 0, buffer![length - 1] == 0x0A { length -= 1 }
        if length > 0, buffer![length - 1] == 0x0D { length -= 1 }
        return UnsafeBufferPointer(start: UnsafeRawPointer(buffer!).assumingMemoryBound(to: UInt8.self), count: length)
    }

    /// The first bytes of a file, to tell its format.
    static func prefix(of path: String, count: Int) throws(Failure) -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw Failure(path: path, errno: errno) }
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: count)
        var filled = 0
        while filled < count {
            let result = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress! + filled, count - filled) }
            if result < 0 {
                if errno == EINTR { continue }
                throw Failure(path: path, errno: errno)
            }
            if result == 0 { break }
            filled += result
        }
        return Array(bytes.prefix(filled))
    }

    deinit {
        free(buffer)
        fclose(file)
    }
}
