import Glibc

/// A point in time a wait must not pass.
struct Deadline {
    let instant: ContinuousClock.Instant

    init(after duration: Duration) { instant = ContinuousClock.now.advanced(by: duration) }

    /// Milliseconds left, rounded up, at least 0 (poll(2)'s timeout).
    var remainingMilliseconds: Int32 {
        let left = ContinuousClock.now.duration(to: instant)
        if left <= .zero { return 0 }
        let (seconds, attoseconds) = left.components
        let milliseconds = seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
        return Int32(clamping: milliseconds)
    }
}

/// poll(2) on one descriptor until it is ready or a deadline passes.
enum SocketWait {
    /// Whether `socket` became ready for `events` (or has an error or hang-up for libpq to
    /// find) before `deadline`; false when the deadline passed first.
    static func ready(_ socket: Int32, for events: Int16, before deadline: Deadline) -> Bool {
        while true {
            let milliseconds = deadline.remainingMilliseconds
            var entry = pollfd(fd: socket, events: events, revents: 0)
            let result = poll(&entry, 1, milliseconds)
            if result > 0 { return true }
            if result == 0 {
                if milliseconds == 0 { return false }
                continue
            }
            if errno == EINTR { continue }
            return true
        }
    }
}

extension Duration {
    /// Whole seconds, rounded up, at least `minimum`.
    func wholeSeconds(atLeast minimum: Int64) -> Int64 {
        let (seconds, attoseconds) = components
        return Swift.max(minimum, seconds + (attoseconds > 0 ? 1 : 0))
    }

    /// Whole milliseconds, rounded up, at least 1.
    var wholeMilliseconds: Int64 {
        let (seconds, attoseconds) = components
        return Swift.max(1, seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000)
    }
}
