import Foundation

/// How the sync's thread sleeps until the store commits, a deadline passes, or it is told
/// to stop: a condition variable with a pending flag, so a signal given while the thread was
/// busy is not lost.
final class SyncWakeup: @unchecked Sendable {
    private let condition = NSCondition()
    private var pending = false
    private var stopped = false

    /// Wakes the thread (a commit happened).
    func signal() {
        condition.lock()
        pending = true
        condition.signal()
        condition.unlock()
    }

    /// Wakes the thread for good: every later `wait` returns at once.
    func stop() {
        condition.lock()
        stopped = true
        condition.broadcast()
        condition.unlock()
    }

    var isStopped: Bool {
        condition.lock()
        defer { condition.unlock() }
        return stopped
    }

    /// Sleeps until a signal (given since the last wait, or during this one), `stop`, or
    /// `duration`; returns false once stopped.
    @discardableResult
    func wait(upTo duration: Duration) -> Bool { sleep(for: duration, endedBySignal: true) }

    /// Sleeps for `duration` unless stopped; a commit does not end it. False once stopped.
    @discardableResult
    func pause(for duration: Duration) -> Bool { sleep(for: duration, endedBySignal: false) }

    private func sleep(for duration: Duration, endedBySignal: Bool) -> Bool {
        let seconds = Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
        let deadline = Date(timeIntervalSinceNow: seconds)
        condition.lock()
        defer { condition.unlock() }
        while !stopped && !(endedBySignal && pending) {
            if !condition.wait(until: deadline) { break }
        }
        if endedBySignal { pending = false }
        return !stopped
    }
}
