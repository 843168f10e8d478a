import SensorFrames

/// Where a backend delivers what it receives. Backends know nothing of decoding policy or
/// the store: they hand raw frames on, in the order they arrived, and say what state each
/// sensor is in (for logs, `hrmctl devices` and the service status).
public struct FrameSink: Sendable {
    private let deliver: @Sendable (SensorFrame) -> Void
    private let reportStatus: @Sendable (SensorStatus) -> Void

    public init(
        _ deliver: @escaping @Sendable (SensorFrame) -> Void,
        status reportStatus: @escaping @Sendable (SensorStatus) -> Void = { _ in }
    ) {
        self.deliver = deliver
        self.reportStatus = reportStatus
    }

    /// Hands one frame to the pipeline.
    public func send(_ frame: SensorFrame) { deliver(frame) }

    /// Says what state a sensor is in now; call it on every change.
    public func report(_ status: SensorStatus) { reportStatus(status) }
}

/// One source of sensor frames (BlueZ, HCI, ANT, serial, mock, replay), each behind this
/// interface. `run` streams frames into the sink until the task is cancelled, handling
/// reconnects itself; it returns when it is done (a finished replay) and throws only when it
/// can never work (a missing file, a bad configuration).
public protocol SensorBackend: Sendable {
    /// A short name for logs, such as `mock-1` or `ble`.
    var name: String { get }
    func run(into sink: FrameSink) async throws
}
