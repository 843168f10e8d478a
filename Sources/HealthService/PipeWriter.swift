@preconcurrency import Glibc

/// Writes a result into a descriptor a client passed (the write end of its pipe), in large
/// writes, without ever blocking the service for good on a client that stopped reading:
/// the descriptor is made non-blocking and each wait for room is bounded.
struct PipeWriter: ~Copyable {
    private let descriptor: Int32
    private var buffer: [UInt8] = []
    /// How long a client may leave its pipe full before the service gives up on it.
    static let stallLimitMilliseconds: Int32 = 120_000
    private static let flushSize = 64 * 1024

    /// Why writing stopped.
    enum Failure: Error, CustomStringConvertible {
        case closedByReader
        case stalled
        case system(String, Int32)

        var description: String {
            switch self {
            case .closedByReader: "the client closed its end of the pipe"
            case .stalled: "the client did not read its pipe for \(PipeWriter.stallLimitMilliseconds / 1000) s"
            case .system(let call, let code): "\(call) failed: \(String(cString: strerror(code))) (errno \(code))"
            }
        }
    }

    /// Writes into `descriptor`, which stays owned by the caller.
    init(descriptor: Int32) throws(Failure) {
        self.descriptor = descriptor
        let flags = fcntl(descriptor, F_GETFL)
        guard flags >= 0 else { throw .system("fcntl(F_GETFL)", errno) }
        guard flags & O_ACCMODE != O_RDONLY else { throw .system("write", EBADF) }
        guard fcntl(descriptor, F_SETFL, flags | O_NONBLOCK) == 0 else { throw .system("fcntl(F_SETFL)", errno) }
        buffer.reserveCapacity(Self.flushSize * 2)
    }

    /// Adds a line (a newline is appended).
    mutating func writeLine(_ line: some Sequence<UInt8>) throws(Failure) {
        buffer.append(contentsOf: line)
        buffer.append(0x0A)
        if buffer.count >= Self.flushSize { try flush() }
    }

    /// Writes everything buffered.
    mutating func flush() throws(Failure) {
        var offset = 0
        while offset < buffer.count {
            let written = buffer.withUnsafeBytes { bytes in
                write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
            }
            if written > 0 {
                offset += written
                continue
            }
            switch errno {
            case EINTR: continue
            case EAGAIN:
                var waiting = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
                let ready = poll(&waiting, 1, Self.stallLimitMilliseconds)
                if ready == 0 { throw .stalled }
                if ready < 0 && errno != EINTR { throw .system("poll", errno) }
                if waiting.revents & Int16(POLLERR | POLLHUP) != 0 && waiting.revents & Int16(POLLOUT) == 0 { throw .closedByReader }
            case EPIPE: throw .closedByReader
            default: throw .system("write", errno)
            }
        }
        buffer.removeAll(keepingCapacity: true)
    }
}
