import SensorDecoding
import Timestamps

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

/// What a sensor (or a backend still looking for one) is doing.
public enum SensorState: Sendable, Hashable, CustomStringConvertible {
    /// Waiting for something outside hrmd: no system bus, no bluetoothd, no adapter, no stick.
    case waiting(reason: String)
    /// Looking for the sensor (BLE discovery, an ANT channel searching).
    case searching
    /// Connecting and setting up (BLE connect, services, subscription; ANT channel set-up).
    case connecting
    /// Frames are arriving.
    case streaming
    /// The connection dropped or failed; the next attempt is at `retryAt`.
    case backingOff(retryAt: Timestamp, reason: String)
    /// The backend gave this sensor up (removed from the configuration, or unplugged).
    case stopped(reason: String)

    /// One word for tables and JSON: waiting, searching, connecting, streaming, backing-off, stopped.
    public var name: String {
        switch self {
        case .waiting: "waiting"
        case .searching: "searching"
        case .connecting: "connecting"
        case .streaming: "streaming"
        case .backingOff: "backing-off"
        case .stopped: "stopped"
        }
    }

    /// The reason or the next attempt, when there is one.
    public var detail: String? {
        switch self {
        case .waiting(let reason), .stopped(let reason): reason
        case .backingOff(let retryAt, let reason): "\(reason); next attempt \(retryAt)"
        case .searching, .connecting, .streaming: nil
        }
    }

    public var description: String { detail.map { "\(name) (\($0))" } ?? name }
}

/// A state change of one sensor, as a backend reports it.
public struct SensorStatus: Sendable, Hashable {
    public var time: Timestamp
    public var transport: SensorTransport
    /// The sensor (BLE address, `ant-12345`, …), or the backend's own name (`ble`, `ant:/dev/ttyUSB0`)
    /// while it has no sensor yet.
    public var device: SensorID
    public var state: SensorState

    public init(time: Timestamp = .now(), transport: SensorTransport, device: SensorID, state: SensorState) {
        self.time = time
        self.transport = transport
        self.device = device
        self.state = state
    }
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
