import HealthModel
import Timestamps

/// What a workout file holds: the workout, its figures, the heart-rate samples from its start
/// to its end, oldest first (those in pauses are left out of every file), and its RR intervals.
public struct WorkoutRecording: Sendable {
    public var workout: Workout
    public var summary: WorkoutSummary
    public var points: [WorkoutPoint]
    /// RR intervals (ms) from start to end, oldest first, each at the time it was stored.
    public var rrIntervals: [WorkoutPoint]

    /// `workout` must have ended: files are written of finished workouts.
    public init(workout: Workout, summary: WorkoutSummary, points: [WorkoutPoint], rrIntervals: [WorkoutPoint] = []) {
        self.workout = workout
        self.summary = summary
        self.points = points
        self.rrIntervals = rrIntervals
    }

    /// The end (an open workout's figures run until the time they were taken).
    var end: Timestamp { workout.end ?? workout.start.advanced(bySeconds: summary.elapsedSeconds) }

    /// The RR intervals inside the workout's active time, in time order.
    var activeRRIntervals: [WorkoutPoint] {
        let active = workout.activeIntervals(now: end)
        return rrIntervals.filter { beat in beat.value > 0 && beat.value < 65.535e3 && active.contains { $0.contains(beat.time.secondsSinceEpoch) } }
    }

    /// The points inside the workout's active time, in time order.
    var activePoints: [WorkoutPoint] {
        let active = workout.activeIntervals(now: end)
        return points.filter { point in active.contains { $0.contains(point.time.secondsSinceEpoch) } }
    }
}

/// Why a workout file cannot be written.
public struct WorkoutFileError: Error, Sendable, Hashable, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
