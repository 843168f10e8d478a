import Foundation
import SensorBackends
import SensorDecoding

/// A sink that keeps what a backend sends, for tests to wait on.
final class FrameCollector: @unchecked Sendable {
    private let lock = NSLock()
    private var _frames: [SensorFrame] = []
    private var _statuses: [SensorStatus] = []

    var frames: [SensorFrame] { lock.withLock { _frames } }
    var statuses: [SensorStatus] { lock.withLock { _statuses } }

    var sink: FrameSink {
        FrameSink(
            { frame in self.lock.withLock { self._frames.append(frame) } },
            status: { status in self.lock.withLock { self._statuses.append(status) } })
    }

    /// Waits (at most `limit`) until `condition` holds for the frames so far; returns whether it did.
    func wait(limit: Duration = .seconds(10), until condition: ([SensorFrame]) -> Bool) async -> Bool {
        let deadline = ContinuousClock.now.advanced(by: limit)
        while ContinuousClock.now < deadline {
            if condition(frames) { return true }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return condition(frames)
    }
}
