import HealthModel

/// Which events are news to someone who follows them (`hrmctl watch --type EVENT-TYPE`): those
/// that opened, or ended, since the last look. An event extended by later readings is not
/// news again; one that opened and ended between two looks is told once, ended.
public struct EventFollower: Sendable {
    /// Whether each event seen so far had ended, by id.
    private var ended: [String: Bool] = [:]

    public init() {}

    /// Takes the events as they are when following starts: none of them is news; those open
    /// then are told when they end.
    public mutating func prime(_ events: [HealthEvent]) {
        for event in events { ended[event.id] = !event.isOpen }
    }

    /// The events of `events` (a fresh read) that opened or ended since the last look, oldest
    /// start first.
    public mutating func news(in events: [HealthEvent]) -> [HealthEvent] {
        var news: [HealthEvent] = []
        for event in events.sorted(by: { ($0.start, $0.id) < ($1.start, $1.id) }) {
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
