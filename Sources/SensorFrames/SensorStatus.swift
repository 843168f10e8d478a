import Timestamps

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
    /// A standing remark about the sensor that outlives state changes: a diagnosis such as
    /// "the last 3 links each ended about 30 s after streaming began: …". Shown with the
    /// state's detail in `hrmctl devices`.
    public var note: String?

    public init(time: Timestamp = .now(), transport: SensorTransport, device: SensorID, state: SensorState, note: String? = nil) {
        self.time = time
        self.transport = transport
        self.device = device
        self.state = state
        self.note = note
    }
}
