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

    /// Reads the file open as `descriptor` from its start, through a duplicate of it (the
    /// caller keeps and closes `descriptor`; the file offset they share moves). `name` stands
    /// for the path in errors. The descriptor must be seekable.
    init(descriptor: Int32, name: String) throws(Failure) {
        let copy = fcntl(descriptor, F_DUPFD_CLOEXEC, 0)
        guard copy >= 0 else { throw Failure(path: name, errno: errno) }
        guard lseek(copy, 0, SEEK_SET) == 0 else {
            let error = errno
            close(copy)
            throw Failure(path: name, errno: error)
        }
        guard let file = fdopen(copy, "r") else {
            let error = errno
            close(copy)
            throw Failure(path: name, errno: error)
        }
        self.file = file
        self.path = name
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
        try readFile(path, limit: count)
    }

    /// The first bytes of the file at `path` (at most `limit`).
    private static func readFile(_ path: String, limit: Int) throws(Failure) -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw Failure(path: path, errno: errno) }
        defer { close(fd) }
        return try readAll(descriptor: fd, name: path, limit: limit)
    }

    /// The first bytes of the file open as `descriptor`, read from offset 0 without moving
    /// its offset. `name` stands for the path in errors.
    static func prefix(ofDescriptor descriptor: Int32, name: String, count: Int) throws(Failure) -> [UInt8] {
        try readAll(descriptor: descriptor, name: name, limit: count)
    }

    /// The first bytes of the file open as `descriptor` (at most `limit`), read with pread so
    /// its offset does not move. `name` stands for the path in errors.
    private static func readAll(descriptor: Int32, name: String, limit: Int) throws(Failure) -> [UInt8] {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: min(limit, 65_536))
        while bytes.count < limit {
            let wanted = min(chunk.count, limit - bytes.count)
            let result = chunk.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, wanted, off_t(bytes.count)) }
            if result < 0 {
                if errno == EINTR { continue }
                throw Failure(path: name, errno: errno)
            }
            if result == 0 { break }
            bytes.append(contentsOf: chunk[..<result])
        }
        return bytes
    }

    deinit {
        free(buffer)
        fclose(file)
    }
}
