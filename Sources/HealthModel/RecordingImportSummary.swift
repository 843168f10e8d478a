/// The totals of a `RecordingImport`, over every recording it replayed.
public struct RecordingImportSummary: Codable, Sendable, Equatable, CustomStringConvertible {
    /// Frames read from the recordings.
    public var frames = 0
    /// Samples added to the store.
    public var stored = 0
    /// Samples the store already held.
    public var unchanged = 0
    /// Samples not stored because the importing source may not share their type.
    public var denied = 0
    /// Samples that could not be written to the store.
    public var lost = 0
    /// Trace lines that could not be read, and unusable parts of FIT files and captures.
    public var badLines = 0
    /// Capture records that could not be read or followed.
    public var badRecords = 0
    /// Workouts (a FIT file's sessions) added to the store.
    public var workoutsStored = 0
    /// Workouts the store already held.
    public var workoutsUnchanged = 0
    /// Workouts not stored because the importing source may not share `workout`.
    public var workoutsDenied = 0
    /// Workouts not stored because they break a rule (they overlap another of the person's,
    /// name no one, last too long): each told in a message.
    public var workoutsRefused = 0
    /// Frames (or parts of frames) skipped, by reason.
    public var skipped: [String: Int] = [:]
    /// The importing source's share status for heart-rate: as its last write saw it, else as
    /// the store says.
    public var heartRateShareStatus: AuthorizationStatus = .notDetermined
    /// Nothing was stored because the importing source may not share heart-rate (the writes
    /// that were made were all denied).
    public var storedNothingForLackOfAuthorization = false

    public init() {}

    /// Whether the importing source may share heart-rate.
    public var mayShareHeartRate: Bool { heartRateShareStatus == .sharingAuthorized }

    /// One line: `12 frames; 10 samples stored; 2 already stored`, then what was denied,
    /// the workouts (`1 workout (1 stored)`), what was skipped, bad or lost, when anything was.
    ///
    /// Bad lines and records are what make a replay exit 65: `badLines + badRecords`.
    public var description: String {
        var parts = ["\(frames) frames", "\(stored) samples stored", "\(unchanged) already stored"]
        if denied > 0 { parts.append("\(denied) not authorized") }
        let workouts = [
            (workoutsStored, "stored"), (workoutsUnchanged, "already stored"), (workoutsDenied, "not authorized"), (workoutsRefused, "refused"),
        ].filter { $0.0 > 0 }
        if !workouts.isEmpty {
            let total = workouts.map(\.0).reduce(0, +)
            parts.append("\(total) workout\(total == 1 ? "" : "s") (" + workouts.map { "\($0.0) \($0.1)" }.joined(separator: ", ") + ")")
        }
        if !skipped.isEmpty {
            parts.append("skipped " + skipped.sorted { $0.key < $1.key }.map { "\($0.value) (\($0.key))" }.joined(separator: ", "))
        }
        if badLines > 0 { parts.append("\(badLines) bad lines") }
        if badRecords > 0 { parts.append("\(badRecords) bad records") }
        if lost > 0 { parts.append("\(lost) could not be written") }
        return parts.joined(separator: "; ")
    }
}
