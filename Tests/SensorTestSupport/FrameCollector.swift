import Foundation
import SensorBackend
import SensorFrames
import TestSupport

/// A sink that keeps what a backend sends, for tests to wait on.
public final class FrameCollector: @unchecked Sendable {
    private let lock = NSLock()
    private var _frames: [SensorFrame] = []
    private var _statuses: [SensorStatus] = []

    public init() {}

    public var frames: [SensorFrame] { lock.withLock { _frames } }
    public var statuses: [SensorStatus] { lock.withLock { _statuses } }

    public var sink: FrameSink {
        FrameSink(
            { frame in self.lock.withLock { self._frames.append(frame) } },
            status: { status in self.lock.withLock { self._statuses.append(status) } })
    }

    /// Waits until `condition` holds for the frames so far; returns whether it did (false past
    /// the hang bound, or when the task is cancelled).
    public func wait(until condition: ([SensorFrame]) -> Bool) async -> Bool {
        (try? await eventually("the frames", checkingEvery: .milliseconds(20)) { condition(frames) }) != nil
    }

    /// Waits until a status satisfies `condition`; returns the first that does (nil past the hang
    /// bound, or when the task is cancelled).
    public func status(where condition: @escaping (SensorStatus) -> Bool) async -> SensorStatus? {
        try? await eventually("a status", checkingEvery: .milliseconds(10)) { statuses.contains(where: condition) }
        return statuses.first(where: condition)
    }
}
