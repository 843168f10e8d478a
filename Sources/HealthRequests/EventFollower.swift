import HealthModel
import Timestamps

/// Which events of some types are news to someone who follows them (`hrmctl watch --type
/// EVENT-TYPE`, `hrmctl notify`): those that opened, or ended, since the last look. An event
/// extended by later readings is not news again; one that opened and ended between two looks
/// is told once, ended. Each look reads ``request(app:)``: the events whose readings reach
/// into the time following started.
public struct EventFollower: Sendable {
    /// The event types followed.
    public let types: Set<SampleType>
    /// When following started.
    public let since: Timestamp
    /// Whether each event seen so far had ended, by id.
    private var ended: [String: Bool] = [:]

    public init(types: [SampleType], since: Timestamp = .now()) {
        self.types = Set(types)
        self.since = since
    }

    /// The request each look reads, for `app`: one event type, or every one when several are
    /// followed (the others are left out by ``prime(_:)`` and ``news(in:)``).
    public func request(app: String) -> Events {
        Events(
            app: app, since: since, until: nil, type: types.count == 1 ? types.first : nil, person: nil, device: nil,
            limit: EventQuery.answerLimit)
    }

    /// Takes the events as they are when following starts: none of them is news; those open
    /// then are told when they end.
    public mutating func prime(_ events: [HealthEvent]) {
        for event in events where types.contains(event.type) { ended[event.id] = !event.isOpen }
    }

    /// The events of `events` (a fresh read) that opened or ended since the last look, oldest
    /// start first.
    public mutating func news(in events: [HealthEvent]) -> [HealthEvent] {
        var news: [HealthEvent] = []
        for event in events.sorted(by: { ($0.start, $0.id) < ($1.start, $1.id) }) where types.contains(event.type) {
            let hasEnded = !event.isOpen
            if let before = ended[event.id] {
                if hasEnded && !before { news.append(event) }
            } else {
                news.append(event)
            }
            ended[event.id] = hasEnded
        }
        return news
    }
}
