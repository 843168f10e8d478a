import Synchronization

/// One reader's queue of live events: bounded, so a reader that does not keep up never holds
/// up the feed or another reader. When it is full, what it holds is dropped and replaced by a
/// gap marker, and the reader continues from the newest event.
public final class LiveSubscription: Sendable {
    public let reader: LiveReader
    /// Events it holds at most.
    public let capacity: Int
    /// Asked by the feed once a second: nil while the reader may go on, else the one line
    /// that ends it (a revoked or expired token).
    let recheck: (@Sendable () -> String?)?

    private struct State {
        var queue: [LiveEvent] = []
        var head = 0
        var waiter: CheckedContinuation<LiveEvent?, Never>?
        var ended = false
        var dropped = 0
    }

    private let state = Mutex(State())

    init(reader: LiveReader, capacity: Int, recheck: (@Sendable () -> String?)?) {
        self.reader = reader
        self.capacity = max(2, capacity)
        self.recheck = recheck
    }

    /// How many events were dropped in all because the reader fell behind (counted again when
    /// a gap marker that already counted them is dropped in turn).
    public var droppedEvents: Int { state.withLock { $0.dropped } }

    /// Queues `event` (or hands it to a waiting reader). Never blocks.
    func push(_ event: LiveEvent) {
        let waiter: CheckedContinuation<LiveEvent?, Never>? = state.withLock { state in
            guard !state.ended else { return nil }
            if case .ended = event { state.ended = true }
            if let waiter = state.waiter {
                state.waiter = nil
                return waiter
            }
            if state.queue.count - state.head >= capacity {
                // What the reader has not taken is dropped; an earlier gap marker's count
                // carries over into the new one.
                let missed = state.queue[state.head...].reduce(0) { count, queued in
                    if case .gap(let earlier) = queued { return count + earlier }
                    return count + 1
                }
                state.dropped += missed
                state.queue.removeAll(keepingCapacity: true)
                state.head = 0
                state.queue.append(.gap(missed: missed))
            }
            state.queue.append(event)
            return nil
        }
        waiter?.resume(returning: event)
    }

    /// The next event; nil once the subscription ended and its events were taken, or when
    /// the calling task is cancelled.
    public func next() async -> LiveEvent? {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<LiveEvent?, Never>) in
                let ready: LiveEvent?? = state.withLock { state in
                    if state.head < state.queue.count {
                        let event = state.queue[state.head]
                        state.head += 1
                        if state.head == state.queue.count {
                            state.queue.removeAll(keepingCapacity: true)
                            state.head = 0
                        }
                        return .some(event)
                    }
                    if state.ended || Task.isCancelled { return .some(nil) }
                    state.waiter = continuation
                    return .none
                }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            let waiter = state.withLock { state in
                state.ended = true
                defer { state.waiter = nil }
                return state.waiter
            }
            waiter?.resume(returning: nil)
        }
    }

    /// Every event queued now, at least one (waiting for it); empty once the subscription
    /// ended and its events were taken, or when the calling task is cancelled. One wake-up
    /// for all that came while the reader was busy.
    public func nextBatch() async -> [LiveEvent] {
        let queued = takeQueued()
        if !queued.isEmpty { return queued }
        guard let first = await next() else { return [] }
        return [first] + takeQueued()
    }

    /// Every event queued now, taken from the queue.
    private func takeQueued() -> [LiveEvent] {
        state.withLock { state in
            guard state.head < state.queue.count else { return [] }
            let events = Array(state.queue[state.head...])
            state.queue.removeAll(keepingCapacity: true)
            state.head = 0
            return events
        }
    }

    /// Ends the subscription: `next()` returns what is queued, then nil.
    func close() {
        let waiter = state.withLock { state in
            state.ended = true
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: nil)
    }

    var isEnded: Bool { state.withLock { $0.ended } }

    /// Whether a reader waits in `next()` now.
    var isWaiting: Bool { state.withLock { $0.waiter != nil } }

    /// Samples queued and not yet taken.
    var queuedSamples: Int {
        state.withLock { state in
            state.queue[state.head...].reduce(0) { count, event in
                if case .sample = event { return count + 1 }
                return count
            }
        }
    }
}
