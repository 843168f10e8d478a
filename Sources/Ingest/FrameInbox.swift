import HealthModel
import HealthStore
import SensorFrames
import Synchronization

/// The pipeline's bounded queue: many backends submit frames, one pipeline consumes them,
/// interleaved with the flush ticks. When the queue is full a frame is refused and counted
/// (it was never accepted, so nothing stored is lost).
///
/// A submission only appends to an array under a lock. The pipeline takes everything queued at
/// once (the two arrays are swapped, so the steady state allocates nothing) and is woken only
/// by a tick, a new configuration, the end, or a queue filling up: one wake-up per batch, not
/// one per frame.
public final class FrameInbox: Sendable {
    enum Input: Sendable {
        case frame(SensorFrame)
        case status(SensorStatus)
        case tick
        case locationOverrides([SensorID: HeartRateSensorLocation])
    }

    private struct State {
        var inputs: [Input] = []
        /// The pipeline, when it waits for the next batch.
        var waiter: CheckedContinuation<Void, Never>?
        /// Whether something queued wants the pipeline now rather than at its next tick.
        var urgent = false
        var finished = false
        var refused = 0

        /// Whether the pipeline should take the queue now.
        func isReady(threshold: Int) -> Bool {
            urgent || finished || inputs.count >= threshold || Task.isCancelled
        }
    }

    private let state = Mutex(State())
    private let capacity: Int
    /// Queued inputs that wake the pipeline before its tick, so a burst never fills the queue.
    private let wakeThreshold: Int

    /// A queue that holds at most `capacity` inputs.
    public init(capacity: Int = 65_536) {
        self.capacity = max(capacity, 1)
        wakeThreshold = min(1024, max(self.capacity / 2, 1))
    }

    /// Queues a frame; false (and counted) when the queue is full or closed.
    @discardableResult
    public func submit(_ frame: SensorFrame) -> Bool {
        guard append(.frame(frame)) else {
            state.withLock { $0.refused += 1 }
            return false
        }
        return true
    }

    /// Queues a backend's report of a sensor's state, in order with its frames.
    public func report(_ status: SensorStatus) {
        append(.status(status))
    }

    /// Frames refused so far because the queue was full or closed.
    public var refusedCount: Int { state.withLock { $0.refused } }

    func tick() { append(.tick, urgent: true) }

    /// Replaces the configured locations from the next frame on (a reloaded configuration).
    public func updateLocationOverrides(_ overrides: [SensorID: HeartRateSensorLocation]) {
        append(.locationOverrides(overrides), urgent: true)
    }

    /// Closes the queue: the pipeline drains what is queued, flushes and stops.
    public func finish() {
        let waiter = state.withLock { state in
            state.finished = true
            return state.waiter.take()
        }
        waiter?.resume()
    }

    /// Appends `input` unless the queue is full or closed; wakes the pipeline when it is urgent
    /// or the queue reached the wake threshold.
    @discardableResult
    private func append(_ input: Input, urgent: Bool = false) -> Bool {
        let (accepted, waiter) = state.withLock { state -> (Bool, CheckedContinuation<Void, Never>?) in
            guard !state.finished, state.inputs.count < capacity else { return (false, nil) }
            state.inputs.append(input)
            state.urgent = state.urgent || urgent
            guard state.urgent || state.inputs.count >= wakeThreshold else { return (true, nil) }
            return (true, state.waiter.take())
        }
        waiter?.resume()
        return accepted
    }

    /// Moves every queued input into `batch` (which must be empty), waiting until a tick, a new
    /// configuration, a full enough queue or the end makes them worth taking. Returns false once
    /// the queue is finished (or the task cancelled) and nothing is left.
    func nextBatch(into batch: inout [Input]) async -> Bool {
        while true {
            let taken = state.withLock { state -> Bool? in
                guard state.isReady(threshold: wakeThreshold) else { return nil }
                guard !state.inputs.isEmpty else { return false }  // finished or cancelled, and drained
                swap(&state.inputs, &batch)
                state.urgent = false
                return true
            }
            if let taken { return taken }
            await withTaskCancellationHandler {
                await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
                    let ready = state.withLock { state -> Bool in
                        if state.isReady(threshold: wakeThreshold) { return true }
                        state.waiter = waiter
                        return false
                    }
                    if ready { waiter.resume() }
                }
            } onCancel: {
                state.withLock { $0.waiter.take() }?.resume()
            }
        }
    }
}
