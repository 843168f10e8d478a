import Timestamps

/// One reading of a device's stream as the detector sees it: its time span, its heart rate,
/// whether the strap reported skin contact, and whether its wearer was in a workout.
public struct EventReading: Sendable, Equatable {
    /// When the reading starts.
    public let start: Timestamp
    /// When the reading ends; never before ``start``.
    public let end: Timestamp
    /// Heart rate in count/min; nil for a reading that reports no heart rate (only contact,
    /// say), which high and low ignore.
    public let heartRate: Double?
    /// Whether the strap reported skin contact; nil when it did not say. Only `false` is
    /// contact lost.
    public let contact: Bool?
    /// Whether the reading falls inside a workout of its wearer, as the caller decides: such
    /// a reading ends every run and is part of none.
    public let insideWorkout: Bool

    /// A reading; an `end` before `start` is taken as `start`, and a NaN heart rate as none.
    public init(start: Timestamp, end: Timestamp, heartRate: Double?, contact: Bool?, insideWorkout: Bool = false) {
        self.start = start
        self.end = max(start, end)
        self.heartRate = heartRate.flatMap { $0.isNaN ? nil : $0 }
        self.contact = contact
        self.insideWorkout = insideWorkout
    }
}
