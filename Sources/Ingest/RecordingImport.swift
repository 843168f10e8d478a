import FITDecoding
import HealthModel
import HealthStore
import Logging
import Recordings
import SensorFrames
import Timestamps
import WorkoutFiles

/// Replays recordings (hrmd traces, FIT files and btsnoop captures, told apart by content)
/// into the store through the same decode → convert → authorize → store path as live data,
/// with their original timestamps, as `hrmctl replay` and the store service's Import do.
/// Replaying what is already stored stores nothing new. A FIT file's sessions become
/// workouts (of the person wearing its strap then, else of the strap), as the importing
/// source when it may share `workout`.
///
/// Replay each recording with `replay(path:)` or `replay(descriptor:name:)`, then call
/// `finish()` for the totals. Messages for the user (`NAME:12: reason` for a bad trace line,
/// `NAME: record 12: reason` for a bad capture record, `NAME: reason` for an unusable part,
/// accepted damage or what was assumed to read a capture) go to `messages` as they come, one
/// line each; at most `maxBadLineMessages` bad lines or records are told per recording, then
/// how many more there were.
public struct RecordingImport {
    /// How recordings are played.
    public struct Options: Sendable, Hashable {
        /// Play N times faster than recorded; nil (or not a positive finite number): as fast
        /// as possible.
        public var speed: Double?
        /// Store what a damaged (truncated or corrupt) FIT file holds before the damage,
        /// instead of refusing the file.
        public var acceptDamaged: Bool
        /// How btsnoop captures are read (the Heart Rate Measurement handle they lack
        /// discovery of).
        public var capture: BTSnoopOptions

        public init(speed: Double? = nil, acceptDamaged: Bool = false, capture: BTSnoopOptions = .init()) {
            self.speed = speed
            self.acceptDamaged = acceptDamaged
            self.capture = capture
        }
    }

    /// Bad lines or records told one by one per recording; the rest are counted in one message.
    public static let maxBadLineMessages = 50

    private let store: HealthStore
    private let options: Options
    private let messages: (String) -> Void
    private var ingestor: FrameIngestor
    private var badLines = 0
    private var badRecords = 0
    private var workouts = WorkoutTotals()

    /// An import into `store` with `settings` (its source is the one that writes, and whose
    /// authorization applies). Ingest errors are logged to `logger`; messages for the user go
    /// to `messages`.
    public init(
        store: HealthStore, settings: IngestSettings, options: Options = Options(), logger: Logger,
        messages: @escaping (String) -> Void
    ) {
        self.store = store
        self.options = options
        self.messages = messages
        ingestor = FrameIngestor(store: store, settings: settings, logger: logger)
    }

    /// Replays the recording at `path`; `name` (the path when nil) stands for it in messages.
    /// `progress` hears the bytes read so far as the recording is read.
    ///
    /// Throws when the file cannot be read at all, is not a recording, or is a damaged FIT
    /// file (unless damage is accepted); what earlier recordings gave is still pending then:
    /// `finish()` writes it.
    public mutating func replay(
        path: String, name: String? = nil, progress: ((_ bytesRead: Int) -> Void)? = nil
    ) throws(RecordingError) {
        let name = name ?? path
        switch try TraceRecording.kind(of: path) {
        case .trace: replay(try TraceRecording(path: path), name: name, numbering: .lines, progress: progress)
        case .fit: replay(try FITRecording(path: path, acceptingDamage: options.acceptDamaged), name: name, progress: progress)
        case .btsnoop: replay(try BTSnoopRecording(path: path, options: options.capture), name: name, numbering: .records, progress: progress)
        }
    }

    /// Replays the recording open as `descriptor` (a regular file, read from its start; the
    /// caller keeps it open and closes it, and the file offset may move). `name` stands for
    /// it in messages.
    public mutating func replay(descriptor: Int32, name: String) throws(RecordingError) {
        switch try TraceRecording.kind(ofDescriptor: descriptor, name: name) {
        case .trace:
            replay(try TraceRecording(descriptor: descriptor, name: name), name: name, numbering: .lines, progress: nil)
        case .fit:
            replay(try FITRecording(descriptor: descriptor, name: name, acceptingDamage: options.acceptDamaged), name: name, progress: nil)
        case .btsnoop:
            replay(try BTSnoopRecording(descriptor: descriptor, name: name, options: options.capture), name: name, numbering: .records, progress: nil)
        }
    }

    /// Writes what is pending and returns the totals of every recording replayed.
    public mutating func finish() -> RecordingImportSummary {
        ingestor.finish(closingEvents: true)
        let counters = ingestor.counters
        var summary = RecordingImportSummary()
        summary.frames = counters.frames
        summary.stored = counters.stored
        summary.unchanged = counters.unchanged
        summary.denied = counters.denied
        summary.lost = counters.lost
        summary.badLines = badLines
        summary.badRecords = badRecords
        summary.workoutsStored = workouts.stored
        summary.workoutsUnchanged = workouts.unchanged
        summary.workoutsDenied = workouts.denied
        summary.workoutsRefused = workouts.refused
        for skip in ingestor.skipTotals { summary.skipped[skip.reason, default: 0] += skip.count }
        let seen = ingestor.authorizationStatuses[.heartRate]
        summary.heartRateShareStatus = seen
            ?? (try? store.authorizationStatus(source: ingestor.settings.source.name, type: .heartRate)) ?? .notDetermined
        summary.storedNothingForLackOfAuthorization = seen != .sharingAuthorized && counters.denied > 0 && counters.stored == 0
        return summary
    }

    /// A FIT file: the damage accepted is told first; its workouts are stored after its samples.
    private mutating func replay(_ recording: FITRecording, name: String, progress: ((Int) -> Void)?) {
        if let damage = recording.damage { messages("\(name): \(damage); storing what was read before it") }
        replay(recording, name: name, numbering: .none, progress: progress)
        storeWorkouts(of: recording, name: name)
    }

    /// Stores the workouts of a FIT file's sessions, telling in one line each what was not
    /// stored and why.
    private mutating func storeWorkouts(of recording: FITRecording, name: String) {
        let sessions = recording.sessions
        let kept = sessions.sessions.count
        if sessions.sessionCount - sessions.unusableSessions > kept {
            messages("\(name): the file has \(sessions.sessionCount) sessions; only the first \(kept) become workouts")
        }
        if sessions.unusableSessions > 0 {
            messages("\(name): \(sessions.unusableSessions) sessions have no absolute start or end after it; they are not workouts")
        }
        if sessions.marksDropped > 0 {
            messages("\(name): \(sessions.marksDropped) laps and timer events past the first \(FITSessions.markLimit) are left out of its workouts")
        }
        guard kept > 0 else { return }
        let source = ingestor.settings.source.name
        guard (try? store.authorizationStatus(source: source, type: .workout)) == .sharingAuthorized else {
            workouts.denied += kept
            messages("\(name): \(kept) workout\(kept == 1 ? " is" : "s are") not stored: \(source) may not share workout (grant it with: hrmctl auth grant \(source) workout)")
            return
        }
        let device = recording.device.rawValue
        for session in FITSessionWorkout.all(sessions) {
            do throws(HealthStoreError) {
                let person = try store.personWearing(device, at: session.start)
                let workout = session.workout(id: Workout.newID(), source: source, person: person, device: device)
                switch try store.importWorkout(workout) {
                case .stored: workouts.stored += 1
                case .unchanged: workouts.unchanged += 1
                }
            } catch {
                workouts.refused += 1
                messages("\(name): the \(session.activity.rawValue) workout from \(RFC3339.string(from: session.start)) is not stored: \(error)")
            }
        }
    }

    /// Takes every entry of `recording`; `progress` hears how far it has read after each.
    private mutating func replay(
        _ recording: some RecordingReader, name: String, numbering: BadLineTeller.Numbering, progress: ((Int) -> Void)?
    ) {
        var recording = recording
        var told = BadLineTeller(name: name, numbering: numbering, messages: messages)
        var pace = ReplayPace(speed: options.speed)
        while let entry = recording.next() {
            take(entry, pace: &pace, told: &told)
            progress?(recording.bytesRead)
        }
        told.finish()
        badLines += told.lines
        badRecords += told.records
    }

    private mutating func take(_ entry: RecordingEntry, pace: inout ReplayPace, told: inout BadLineTeller) {
        switch entry {
        case .frame(let frame, let place):
            pace.wait(until: frame.time)
            for case .malformed(let detail) in ingestor.skips(accepting: frame) {
                told.undecodable(frame, at: place, detail)
            }
        case .badLine(let line, let reason):
            told.badLine(line, reason)
        case .badRecord(let record, let reason):
            told.badRecord(record, reason)
        case .unusable(let reason):
            told.unusable(reason)
        case .notice(let text):
            told.notice(text)
        }
    }
}

/// What became of the workouts of the recordings replayed.
private struct WorkoutTotals {
    var stored = 0
    var unchanged = 0
    var denied = 0
    var refused = 0
}

/// Tells one recording's bad lines (or records): the first `RecordingImport.maxBadLineMessages`
/// each, then how many more; unusable parts always.
private struct BadLineTeller {
    /// What a frame's place in its recording counts.
    enum Numbering {
        /// Lines of a trace, from 1.
        case lines
        /// Records of a capture, from 1.
        case records
        /// Nothing a user could find (a FIT file's frames).
        case none
    }

    let name: String
    let numbering: Numbering
    let messages: (String) -> Void
    /// Bad lines and unusable parts so far.
    private(set) var lines = 0
    /// Bad capture records so far.
    private(set) var records = 0
    /// Bad lines and records told or not.
    private var bad: Int { lines + records }

    init(name: String, numbering: Numbering, messages: @escaping (String) -> Void) {
        self.name = name
        self.numbering = numbering
        self.messages = messages
    }

    mutating func badLine(_ line: Int, _ reason: String) {
        lines += 1
        tell("\(name):\(line): \(reason)")
    }

    mutating func badRecord(_ record: Int, _ reason: String) {
        records += 1
        tell("\(name): record \(record): \(reason)")
    }

    mutating func unusable(_ reason: String) {
        lines += 1
        messages("\(name): \(reason)")
    }

    /// A frame at `place` (its line or record; 0 for none) that does not decode: bad input
    /// where it was recorded, told and counted like a bad line or record, so the replay exits 65.
    mutating func undecodable(_ frame: SensorFrame, at place: Int, _ detail: String) {
        let what = frame.characteristic.map { "\(frame.kind.name) \($0)" } ?? "\(frame.transport) \(frame.kind.name)"
        let reason = "\(what) does not decode: \(detail)"
        switch numbering {
        case .lines where place > 0: badLine(place, reason)
        case .records where place > 0: badRecord(place, reason)
        default: unusable("a frame at \(RFC3339.string(from: frame.time)): \(reason)")
        }
    }

    /// What was assumed to read the recording: told, not counted.
    func notice(_ text: String) {
        messages("\(name): \(text)")
    }

    private func tell(_ message: String) {
        if bad <= RecordingImport.maxBadLineMessages { messages(message) }
    }

    func finish() {
        let limit = RecordingImport.maxBadLineMessages
        if bad > limit { messages("\(name): \(bad - limit) more bad \(records > 0 ? "records" : "lines")") }
    }
}
