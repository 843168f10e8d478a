import HealthModel
import PostgresClient

/// One step of a gateway's sync of workouts: the local store's workout changes after the
/// central cursor of type `workout`, `from`, up to and including `to`: each changed workout
/// whole, as it now is, and the ids of those deleted. Applied in one transaction with the
/// cursor's move, so each change counts exactly once whatever fails where.
public struct WorkoutSyncBatch: Sendable {
    public var from: Int64
    public var to: Int64
    public var changed: [Workout]
    public var deleted: [String]

    public init(from: Int64, to: Int64, changed: [Workout], deleted: [String]) {
        self.from = from
        self.to = to
        self.changed = changed
        self.deleted = deleted
    }
}

/// What applying a workout batch did.
public struct WorkoutSyncOutcome: Sendable, Equatable {
    /// Workouts written (new, or replacing this gateway's copy).
    public var stored = 0
    /// Workouts removed by the batch's deletions.
    public var deleted = 0

    public init(stored: Int = 0, deleted: Int = 0) {
        self.stored = stored
        self.deleted = deleted
    }
}

extension CentralGateway {
    /// Applies `batch` and moves the `workout` cursor from `batch.from` to `batch.to`, in one
    /// transaction: all of it or none. Throws `cursorMoved` (nothing applied) when the cursor
    /// is elsewhere.
    public func apply(_ batch: WorkoutSyncBatch) throws(CentralStoreError) -> WorkoutSyncOutcome {
        try inCursorTransaction(of: .workout, from: batch.from, to: batch.to) { connection, sourceID throws(PostgresError) in
            var outcome = WorkoutSyncOutcome()
            for workout in batch.changed {
                _ = try connection.execute(
                    "SELECT hrmd.workout_put($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)",
                    [
                        String(id), CentralText.storable(workout.id), String(try sourceID(HealthSource(name: workout.source))),
                        workout.person.map(CentralText.storable), workout.device.map(CentralText.storable), workout.activity.rawValue,
                        String(workout.start.microsecondsSinceEpoch), workout.end.map { String($0.microsecondsSinceEpoch) },
                        PostgresArrayLiteral.text(workout.events.map(\.type.rawValue)),
                        PostgresArrayLiteral.int64(workout.events.map(\.time.microsecondsSinceEpoch)), String(batch.to),
                    ])
                outcome.stored += 1
            }
            if !batch.deleted.isEmpty {
                let gone = try connection.execute(
                    "SELECT hrmd.workout_drop($1, $2)", [String(id), PostgresArrayLiteral.text(batch.deleted.map(CentralText.storable))])
                outcome.deleted = Int(try gone.int64(0, 0))
            }
            return outcome
        }
    }
}
