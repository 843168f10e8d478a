import HealthModel
import HealthStore
import SensorFrames
import Timestamps

/// What every sensor is doing, gathered by the live pipeline from the states backends report
/// and the frames that arrive: the rows `hrmctl devices` shows and the service status counts.
/// Pure: times come in with the reports and frames, and `due(at:)` is asked with a time.
struct SensorActivityBoard {
    private struct Entry {
        var transport: SensorTransport
        var state: SensorState
        var note: String?
        var since: Timestamp
        var lastFrame: Timestamp?
        var frames = 0
        var skipped = 0

        /// The state's detail and the note, as `hrmctl devices` shows them.
        var detail: String? {
            let parts = [state.detail, note].compactMap { $0 }
            return parts.isEmpty ? nil : parts.joined(separator: "; ")
        }
    }

    /// How often the rows are rewritten even without a change, so a reader can tell a
    /// running daemon's rows from a stopped one's.
    static let heartbeat: Int64 = 5_000_000

    private var entries: [SensorID: Entry] = [:]
    private var changed = false
    private var lastWrite: Timestamp?

    /// Takes a backend's report of a state change (or of a changed note: `since` stays).
    mutating func note(_ status: SensorStatus) {
        var entry = entries[status.device] ?? Entry(transport: status.transport, state: status.state, since: status.time)
        if entry.state != status.state || entries[status.device] == nil {
            entry.state = status.state
            entry.since = status.time
        }
        entry.note = status.note
        entry.transport = status.transport
        entries[status.device] = entry
        changed = true
    }

    /// Counts a frame and its skips. A sensor heard without a report is streaming.
    mutating func count(_ frame: SensorFrame, skipped: Int) {
        guard frame.transport != .fit else { return }
        var entry = entries[frame.device] ?? Entry(transport: frame.transport, state: .streaming, since: frame.time)
        entry.frames += 1
        entry.skipped += skipped
        if frame.kind == .notify { entry.lastFrame = frame.time }
        if entries[frame.device] == nil { changed = true }
        entries[frame.device] = entry
    }

    /// Sensors that are streaming now.
    var streamingCount: Int { entries.values.count { $0.state == .streaming } }

    /// Whether the rows should be written now: something changed, or the heartbeat is due.
    func due(at now: Timestamp) -> Bool {
        changed || lastWrite.map { now.microsecondsSinceEpoch - $0.microsecondsSinceEpoch >= Self.heartbeat } ?? true
    }

    /// Every sensor's row as of `now`; marks them written.
    mutating func rows(at now: Timestamp, battery: (SensorID) -> Int?) -> [SensorActivity] {
        changed = false
        lastWrite = now
        return entries.sorted { $0.key < $1.key }.map { device, entry in
            SensorActivity(
                identifier: device.rawValue, transport: entry.transport.rawValue, state: entry.state.name,
                detail: entry.detail, since: entry.since, battery: battery(device), lastFrame: entry.lastFrame,
                frames: entry.frames, skipped: entry.skipped, updatedAt: now)
        }
    }

    /// Marks every sensor stopped (the daemon is stopping).
    mutating func stopAll(at now: Timestamp, reason: String) {
        for device in entries.keys {
            entries[device]?.state = .stopped(reason: reason)
            entries[device]?.since = now
        }
        changed = true
    }
}
