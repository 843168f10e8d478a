import HealthModel
import Timestamps

/// What a workout file holds: the workout, its figures, and the heart-rate samples from its
/// start to its end, oldest first (those in pauses are left out of every file).
public struct WorkoutRecording: Sendable {
    public var workout: Workout
    public var summary: WorkoutSummary
    public var points: [WorkoutPoint]

    /// `workout` must have ended: files are written of finished workouts.
    public init(workout: Workout, summary: WorkoutSummary, points: [WorkoutPoint]) {
        self.workout = workout
        self.summary = summary
        self.points = points
    }

    /// The end (an open workout's figures run until the time they were taken).
    var end: Timestamp { workout.end ?? workout.start.advanced(bySeconds: summary.elapsedSeconds) }

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
