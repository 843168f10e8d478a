import Timestamps

/// An event as far as it is known: open while its condition lasts (``end`` nil), closed once
/// it has ended.
public struct DetectedEvent: Sendable, Equatable, CustomStringConvertible {
    /// What the event is about.
    public var kind: EventKind
    /// When the event starts: its first reading's start.
    public var start: Timestamp
    /// When the event ended; nil while it is open.
    public var end: Timestamp?
    /// The end so far: the latest end of its readings (equal to ``end`` once closed).
    public var lastEnd: Timestamp
    /// The rule's value the event is measured against: `high` or `low` in count/min,
    /// `batteryLow` in percent, `disconnectedFor` in seconds; nil for contact lost.
    public var threshold: Double?
    /// The most extreme value so far: the highest heart rate of a high event, the lowest of a
    /// low event, the lowest battery level of a battery-low event; nil for contact lost.
    public var extreme: Double?

    /// An event with every field given.
    public init(kind: EventKind, start: Timestamp, end: Timestamp?, lastEnd: Timestamp, threshold: Double?, extreme: Double?) {
        self.kind = kind
        self.start = start
        self.end = end
        self.lastEnd = lastEnd
        self.threshold = threshold
        self.extreme = extreme
    }

    /// Whether the event has not ended yet.
    public var isOpen: Bool { end == nil }

    /// This event closed at its end so far.
    public var closed: DetectedEvent {
        var event = self
        event.end = lastEnd
        return event
    }

    public var description: String {
        var text = "\(kind) \(start)…\(end.map { "\($0)" } ?? "open (\(lastEnd))")"
        if let threshold { text += " threshold \(AlertRules.text(of: threshold))" }
        if let extreme { text += " extreme \(AlertRules.text(of: extreme))" }
        return text
    }
}
