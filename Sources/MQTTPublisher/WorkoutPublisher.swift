import HealthModel
import LiveFeed
import Timestamps

/// Each owner's latest workout as the publisher last told it, and the messages that tell the
/// broker of a change: the owner's state (retained), and the first time an owner is seen its
/// Home Assistant entities. Open workouts are told again every ``tickInterval`` so that the
/// elapsed time moves. At most ``maximumOwners`` owners are kept; past that the one whose
/// workout ended longest ago is forgotten (its retained messages cleared).
struct WorkoutPublisher {
    static let maximumOwners = 128
    static let tickInterval = Duration.seconds(10)

    let layout: MQTTLayout
    let publishesDiscovery: Bool
    /// The latest workout of each owner.
    private(set) var latest: [WorkoutOwner: Workout] = [:]

    init(layout: MQTTLayout, publishesDiscovery: Bool) {
        self.layout = layout
        self.publishesDiscovery = publishesDiscovery
    }

    /// The messages for a live workout change.
    mutating func messages(for change: LiveWorkout, now: Timestamp) -> [MosquittoMessage] {
        switch change {
        case .changed(let workout):
            let owner = WorkoutOwner(workout)
            // An older workout changing (entered after the fact) does not replace a newer one.
            if let current = latest[owner], current.id != workout.id, current.start > workout.start { return [] }
            var messages: [MosquittoMessage] = []
            if latest[owner] == nil {
                if latest.count >= Self.maximumOwners { messages += forgetOldest() }
                messages += discovery(owner)
            }
            latest[owner] = workout
            messages.append(MosquittoMessage(topic: layout.workoutTopic(owner), text: MQTTLayout.workoutPayload(workout, now: now), retain: true))
            return messages
        case .deleted(let id):
            guard let (owner, _) = latest.first(where: { $0.value.id == id }) else { return [] }
            latest[owner] = nil
            return [MosquittoMessage(topic: layout.workoutTopic(owner), text: MQTTLayout.noWorkoutPayload, retain: true)]
        }
    }

    /// The states of the open workouts, with their elapsed time now.
    func tick(now: Timestamp) -> [MosquittoMessage] {
        latest.filter { $0.value.isOpen }.sorted { $0.value.start < $1.value.start }.map { owner, workout in
            MosquittoMessage(topic: layout.workoutTopic(owner), text: MQTTLayout.workoutPayload(workout, now: now), retain: true)
        }
    }

    /// After a reconnection: every owner's entities and state.
    func announce(now: Timestamp) -> [MosquittoMessage] {
        latest.sorted { $0.value.start < $1.value.start }.flatMap { owner, workout in
            discovery(owner) + [MosquittoMessage(topic: layout.workoutTopic(owner), text: MQTTLayout.workoutPayload(workout, now: now), retain: true)]
        }
    }

    private func discovery(_ owner: WorkoutOwner) -> [MosquittoMessage] {
        guard publishesDiscovery else { return [] }
        return layout.workoutDiscoveryMessages(owner).map { MosquittoMessage(topic: $0.topic, text: $0.document, retain: true) }
    }

    /// Forgets the owner whose latest workout ended longest ago (an open one last), clearing
    /// its retained state and documents.
    private mutating func forgetOldest() -> [MosquittoMessage] {
        let never = Timestamp(microsecondsSinceEpoch: .max)
        guard let (owner, _) = latest.min(by: { ($0.value.end ?? never) < ($1.value.end ?? never) }) else { return [] }
        latest[owner] = nil
        var cleared = [MosquittoMessage(topic: layout.workoutTopic(owner), text: "", retain: true)]
        if publishesDiscovery {
            cleared += layout.workoutDiscoveryMessages(owner).map { MosquittoMessage(topic: $0.topic, text: "", retain: true) }
        }
        return cleared
    }
}
