import HealthModel
import HealthStore

/// The store's announced changes waiting for the feed's next round, bounded: past
/// ``capacity`` they are dropped and the round reads the store instead.
struct AnnouncedChanges {
    static let capacity = 1024

    private var changes: [StoreChange] = []
    private var overflowed = false

    mutating func add(_ change: StoreChange) {
        guard !overflowed else { return }
        guard changes.count < Self.capacity else {
            changes = []
            overflowed = true
            return
        }
        changes.append(change)
    }

    /// Changes a round could not apply yet, kept for the next one.
    mutating func putBack(_ blocked: [StoreChange]) {
        guard !overflowed else { return }
        changes = blocked + changes
    }

    /// The waiting changes, and whether some were dropped; empties the queue.
    mutating func take() -> (changes: [StoreChange], overflowed: Bool) {
        defer {
            changes = []
            overflowed = false
        }
        return (changes, overflowed)
    }
}

/// What one round sends the readers: new samples, workout and event changes, from announced changes
/// and, when the chain of announcements broke, from a read of the store.
struct Delivery: Sendable {
    var samples: [StoredSample] = []
    var workouts: [Workout] = []
    var deletedWorkouts: [String] = []
    /// Events as saved (opened, extended, ended), oldest save first.
    var events: [HealthEvent] = []
    /// Events deleted, oldest first.
    var deletedEvents: [DeletedEvent] = []
    /// Samples were left out (a large import): readers get a gap marker.
    var sampleGap = false
    /// Workout changes were left out.
    var workoutGap = false
    /// Event changes were left out.
    var eventGap = false

    var isEmpty: Bool {
        samples.isEmpty && workouts.isEmpty && deletedWorkouts.isEmpty && events.isEmpty && deletedEvents.isEmpty && !sampleGap
            && !workoutGap && !eventGap
    }

    /// Takes in each of `changes` that follows `followed` directly (in anchor order), moving
    /// `followed` to its anchor; drops those at or before `followed` (already read). Returns
    /// the ones that do not follow on: one before them was not announced, or they carry no detail.
    mutating func apply(_ changes: [StoreChange], after followed: inout Int64, types: [SampleType]) -> [StoreChange] {
        var blocked: [StoreChange] = []
        for change in changes.sorted(by: { $0.anchor < $1.anchor }) where change.anchor > followed {
            guard blocked.isEmpty, change.previousAnchor == followed, let detail = change.detail else {
                blocked.append(change)
                continue
            }
            samples += detail.added.filter { types.contains($0.sample.type) }
            if types.contains(.workout) {
                workouts += detail.workouts
                deletedWorkouts += detail.deletedWorkouts
            }
            events += detail.events.filter { types.contains($0.type) }
            deletedEvents += detail.deletedEvents.filter { types.contains($0.type) }
            followed = change.anchor
        }
        return blocked
    }

    mutating func append(_ other: Delivery) {
        samples += other.samples
        workouts += other.workouts
        deletedWorkouts += other.deletedWorkouts
        events += other.events
        deletedEvents += other.deletedEvents
        sampleGap = sampleGap || other.sampleGap
        workoutGap = workoutGap || other.workoutGap
        eventGap = eventGap || other.eventGap
    }
}
