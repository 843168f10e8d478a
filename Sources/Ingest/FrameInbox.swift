import HealthStore
import SensorDecoding
import Synchronization

/// The pipeline's bounded queue: many backends submit frames, one pipeline consumes them,
/// interleaved with the flush ticks. When the queue is full a frame is refused and counted
/// (it was never accepted, so nothing stored is lost).
public final class FrameInbox: Sendable {
    enum Input: Sendable {
        case frame(SensorFrame)
        case status(SensorStatus)
        case tick
        case locationOverrides([SensorID: HeartRateSensorLocation])
    }

    let inputs: AsyncStream<Input>
    private let continuation: AsyncStream<Input>.Continuation
    private let refused = Atomic<Int>(0)

    /// A queue that holds at most `capacity` inputs.
    public init(capacity: Int = 65_536) {
        (inputs, continuation) = AsyncStream.makeStream(of: Input.self, bufferingPolicy: .bufferingOldest(capacity))
    }

    /// Queues a frame; false (and counted) when the queue is full or closed.
    @discardableResult
    public func submit(_ frame: SensorFrame) -> Bool {
        switch continuation.yield(.frame(frame)) {
        case .enqueued: return true
        case .dropped, .terminated: refused.add(1, ordering: .relaxed); return false
        @unknown default: return false
        }
    }

    /// Queues a backend's report of a sensor's state, in order with its frames.
    public func report(_ status: SensorStatus) {
        continuation.yield(.status(status))
    }

    /// Frames refused so far because the queue was full or closed.
    public var refusedCount: Int { refused.load(ordering: .relaxed) }

    func tick() { continuation.yield(.tick) }

    /// Replaces the configured locations from the next frame on (a reloaded configuration).
    public func updateLocationOverrides(_ overrides: [SensorID: HeartRateSensorLocation]) {
        continuation.yield(.locationOverrides(overrides))
    }

    /// Closes the queue: the pipeline drains what is queued, flushes and stops.
    public func finish() { continuation.finish() }
}
