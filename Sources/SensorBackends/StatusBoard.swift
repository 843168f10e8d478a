import Logging
import SensorDecoding
import Synchronization

/// Reports each sensor's state to the sink and logs each transition once: a state repeated
/// (the same name and reason) is neither reported nor logged again. Backends that follow
/// several sensors of one transport (BLE through BlueZ or HCI) share one.
public final class StatusBoard: Sendable {
    private let sink: FrameSink
    private let transport: SensorTransport
    private let logger: Logger
    private let last = Mutex<[SensorID: SensorState]>([:])

    public init(sink: FrameSink, transport: SensorTransport, logger: Logger) {
        self.sink = sink
        self.transport = transport
        self.logger = logger
    }

    /// Reports `state` for `device` unless it is already its state.
    public func report(_ device: SensorID, _ state: SensorState) {
        let changed = last.withLock { last in
            guard !Self.same(last[device], state) else { return false }
            last[device] = state
            return true
        }
        guard changed else { return }
        sink.report(SensorStatus(transport: transport, device: device, state: state))
        let level: Logger.Level = switch state {
        case .backingOff, .waiting: .notice
        default: .info
        }
        logger.log(level: level, "\(device): \(state)")
    }

    /// Reports a state that concerns every sensor (no bus, no adapter): to each sensor seen
    /// so far and to `others` (the listed addresses, or the backend's own name).
    public func reportAll(_ state: SensorState, including others: [SensorID]) {
        let devices = Set(last.withLock { Array($0.keys) } + others)
        for device in devices.sorted() { report(device, state) }
    }

    private static func same(_ old: SensorState?, _ new: SensorState) -> Bool {
        guard let old else { return false }
        if case .backingOff = new { return false }  // each retry has its own time
        return old == new
    }
}
