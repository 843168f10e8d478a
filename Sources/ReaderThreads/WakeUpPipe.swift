@preconcurrency import Glibc

/// A pipe that wakes a thread blocked in `poll(2)` on some descriptor: the way hrmd's reader
/// threads (a serial port, the udev monitor, the HCI sockets) learn that their
/// stream's consumer went away. ``signal()`` may be called from any thread, any number of
/// times; the ends close when the last reference goes.
public final class WakeUpPipe: Sendable {
    private let readEnd: Int32
    private let writeEnd: Int32

    /// A new pipe, both ends close-on-exec; throws the errno of `pipe(2)`.
    public init() throws(WaitError) {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { throw WaitError(call: "pipe", errno: errno) }
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        readEnd = ends[0]
        writeEnd = ends[1]
    }

    deinit {
        close(readEnd)
        close(writeEnd)
    }

    /// Wakes the thread waiting in ``wait(for:timeoutMilliseconds:)``, now or at its next wait.
    public func signal() {
        var byte: UInt8 = 1
        _ = write(writeEnd, &byte, 1)
    }

    /// What a wait found.
    public enum Readiness: Sendable, Equatable {
        /// `descriptor` has input (it may also have hung up: read it to find out).
        case readable
        /// `descriptor` hung up or failed without input (POLLHUP, POLLERR, POLLNVAL).
        case hungUp
        /// ``signal()`` was called: stop.
        case wokenUp
        /// Nothing happened within the timeout.
        case timedOut
    }

    /// Waits until `descriptor` has input, hangs up, or this pipe is signalled, at most
    /// `timeoutMilliseconds` (-1: no limit). EINTR is retried here; any other failure of
    /// `poll(2)` is thrown with its errno.
    public func wait(for descriptor: Int32, timeoutMilliseconds: Int32 = -1) throws(WaitError) -> Readiness {
        switch try poll(descriptor, for: POLLIN, timeoutMilliseconds: timeoutMilliseconds) {
        case .ready(let events): events & Int16(POLLIN) != 0 ? .readable : .hungUp
        case .woken: .wokenUp
        case .timedOut: .timedOut
        }
    }

    /// What a wait for output found.
    public enum OutputReadiness: Sendable, Equatable {
        /// `descriptor` takes output, or failed: for a non-blocking `connect(2)`, the attempt
        /// is over and `SO_ERROR` says how it went.
        case writable
        /// ``signal()`` was called: stop.
        case wokenUp
        /// Nothing happened within the timeout.
        case timedOut
    }

    /// Waits until `descriptor` takes output (POLLOUT) or fails, or this pipe is signalled, at
    /// most `timeoutMilliseconds` (-1: no limit): how a non-blocking `connect(2)` is awaited.
    /// Failures of `poll(2)` are thrown as in ``wait(for:timeoutMilliseconds:)``.
    public func waitUntilWritable(_ descriptor: Int32, timeoutMilliseconds: Int32 = -1) throws(WaitError) -> OutputReadiness {
        switch try poll(descriptor, for: POLLOUT, timeoutMilliseconds: timeoutMilliseconds) {
        case .ready: .writable
        case .woken: .wokenUp
        case .timedOut: .timedOut
        }
    }

    private enum PollOutcome {
        /// `descriptor`'s `revents`.
        case ready(Int16)
        case woken
        case timedOut
    }

    /// Polls `descriptor` for `interest` beside the pipe; the pipe wins when both are ready.
    private func poll(_ descriptor: Int32, for interest: Int32, timeoutMilliseconds: Int32) throws(WaitError) -> PollOutcome {
        var entries = [
            pollfd(fd: descriptor, events: Int16(interest), revents: 0),
            pollfd(fd: readEnd, events: Int16(POLLIN), revents: 0),
        ]
        while true {
            let ready = Glibc.poll(&entries, 2, timeoutMilliseconds)
            if ready < 0 {
                if errno == EINTR { continue }
                throw WaitError(call: "poll", errno: errno)
            }
            if ready == 0 { return .timedOut }
            if entries[1].revents != 0 { return .woken }
            return .ready(entries[0].revents)
        }
    }
}

/// A failed `pipe(2)` or `poll(2)`, with its errno.
public struct WaitError: Error, Sendable, Equatable, CustomStringConvertible {
    public var call: String
    public var errno: Int32

    public init(call: String, errno: Int32) {
        self.call = call
        self.errno = errno
    }

    public var description: String { "\(call): \(String(cString: strerror(errno))) (errno \(errno))" }
}

extension Duration {
    /// Whole milliseconds, for `poll(2)` timeouts.
    public var milliseconds: Int32 {
        Int32(clamping: components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000)
    }
}
