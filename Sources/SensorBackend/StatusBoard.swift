import Logging
import SensorFrames
import Synchronization

/// Reports each sensor's state to the sink and logs each transition once: a state repeated
/// (the same name and reason, the same note) is neither reported nor logged again. Backends
/// that follow several sensors of one transport (BLE through BlueZ or HCI) share one.
public final class StatusBoard: Sendable {
    private struct Entry {
        /// The state last reported, and the note it carried.
        var reported: SensorState?
        var reportedNote: String?
        /// The note the next report carries.
        var note: String?
    }

    private let sink: FrameSink
    private let transport: SensorTransport
    private let logger: Logger
    private let entries = Mutex<[SensorID: Entry]>([:])

    public init(sink: FrameSink, transport: SensorTransport, logger: Logger) {
        self.sink = sink
        self.transport = transport
        self.logger = logger
    }

    /// Reports `state` for `device`, with the device's note, unless both are already reported.
    public func report(_ device: SensorID, _ state: SensorState) {
        let status = entries.withLock { entries -> SensorStatus? in
            var entry = entries[device] ?? Entry()
            guard !Self.same(entry, state) else { return nil }
            entry.reported = state
            entry.reportedNote = entry.note
            entries[device] = entry
            return SensorStatus(transport: transport, device: device, state: state, note: entry.note)
        }
        guard let status else { return }
        sink.report(status)
        let level: Logger.Level = switch state {
        case .backingOff, .waiting: .notice
        default: .info
        }
        logger.log(level: level, "\(device): \(state)")
    }

    /// Sets a standing note on `device` (a diagnosis such as `LinkAgeDiagnosis.current`), or
    /// clears it with nil. The note is not reported by itself: it rides on every later report
    /// of the device, and a changed note lets the next report through even when the state is
    /// the same. It is logged once, as a warning, when it is set.
    public func note(_ device: SensorID, _ note: String?) {
        let old = entries.withLock { entries in
            let old = entries[device]?.note
            entries[device, default: Entry()].note = note
            return old
        }
        guard old != note else { return }
        if let note {
            logger.warning("\(device): \(note)")
        } else if let old {
            logger.info("\(device): no longer holds: \(old)")
        }
    }

    /// Reports a state that concerns every sensor (no bus, no adapter): to each sensor seen
    /// so far and to `others` (the listed addresses, or the backend's own name).
    public func reportAll(_ state: SensorState, including others: [SensorID]) {
        let devices = Set(entries.withLock { Array($0.keys) } + others)
        for device in devices.sorted() { report(device, state) }
    }

    private static func same(_ entry: Entry, _ new: SensorState) -> Bool {
        guard let old = entry.reported, entry.reportedNote == entry.note else { return false }
        if case .backingOff = new { return false }  // each retry has its own time
        return old == new
    }
}
