import SensorDecoding

/// Where a backend delivers the raw frames it receives. Backends know nothing of decoding
/// policy or the store: they only hand frames on, in the order they arrived.
public struct FrameSink: Sendable {
    private let deliver: @Sendable (SensorFrame) -> Void

    public init(_ deliver: @escaping @Sendable (SensorFrame) -> Void) {
        self.deliver = deliver
    }

    /// Hands one frame to the pipeline.
    public func send(_ frame: SensorFrame) { deliver(frame) }
}

/// One source of sensor frames (BlueZ, ANT, serial, mock, replay): one file each, behind
/// this interface. `run` streams frames into the sink until the task is cancelled, handling
/// reconnects itself; it returns when it is done (a finished replay) and throws only when it
/// can never work (a missing file, a bad configuration).
public protocol SensorBackend: Sendable {
    /// A short name for logs, such as `mock-1` or `ble`.
    var name: String { get }
    func run(into sink: FrameSink) async throws
}
