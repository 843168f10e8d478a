import Timestamps

/// Finds disconnected events in one strap's link: the link went down (a `disconnected` frame)
/// and the strap was not heard again (a `connected` frame or any other of its frames) for at
/// least `AlertRules.disconnectedFor`.
///
/// The event starts when the link went down and ends when the strap is heard again; its
/// threshold is the rule's time in seconds. Live, ``tick(now:)`` opens it once the time has
/// passed, so it is visible while the strap stays away; a replay sees the strap heard again
/// and stores the closed event at once, the same event. A link still down when a recording
/// ends makes nothing: the recording cannot say how long the strap stayed away (hrmd's own
/// stop ends every link).
public struct LinkWatch: Sendable {
    /// How long the link must stay down before it is an event.
    public let disconnectedFor: Duration
    /// The event open now: what to store to resume after a restart.
    public private(set) var openEvent: DetectedEvent?
    /// When the link went down, while the strap has not been heard since; nil otherwise.
    public private(set) var downSince: Timestamp?

    /// A watch by `rules.disconnectedFor`, continuing `openEvent` when one was stored as open
    /// (a closed or other kind of event is left out).
    public init(rules: AlertRules, resuming openEvent: DetectedEvent? = nil) {
        disconnectedFor = rules.disconnectedFor
        if let openEvent, openEvent.kind == .disconnected, openEvent.isOpen {
            self.openEvent = openEvent
            downSince = openEvent.start
        }
    }

    /// Whether the watch waits for anything: a link down, or an event open.
    public var isWatching: Bool { downSince != nil }

    /// The link went down at `time`.
    public mutating func disconnected(at time: Timestamp) -> [EventUpdate] {
        if downSince == nil { downSince = time }
        return []
    }

    /// The strap was heard at `time`: it connected or sent a frame. Ends a down link, and
    /// closes the event (or gives it closed) when the link was down long enough.
    public mutating func heard(at time: Timestamp) -> [EventUpdate] {
        guard let since = downSince, time >= since else { return [] }
        downSince = nil
        if var event = openEvent {
            openEvent = nil
            event.lastEnd = max(event.lastEnd, time)
            return [.closed(event.closed)]
        }
        guard Microseconds.from(since, to: time) >= Microseconds.of(disconnectedFor) else { return [] }
        return [.closed(event(since: since, lastEnd: time).closed)]
    }

    /// The time is `now`, with no frame from the strap: opens the event when its link has
    /// been down for the rule's time (live only).
    public mutating func tick(now: Timestamp) -> [EventUpdate] {
        guard openEvent == nil, let since = downSince else { return [] }
        guard Microseconds.from(since, to: now) >= Microseconds.of(disconnectedFor) else { return [] }
        let (due, overflow) = since.microsecondsSinceEpoch.addingReportingOverflow(Microseconds.of(disconnectedFor))
        let opened = event(since: since, lastEnd: overflow ? now : Timestamp(microsecondsSinceEpoch: due))
        openEvent = opened
        return [.opened(opened)]
    }

    /// The end of a recording: a link still down is forgotten; an event already open stays
    /// open (the strap was not heard again).
    public mutating func finish() -> [EventUpdate] {
        if openEvent == nil { downSince = nil }
        return []
    }

    private func event(since: Timestamp, lastEnd: Timestamp) -> DetectedEvent {
        DetectedEvent(
            kind: .disconnected, start: since, end: nil, lastEnd: lastEnd,
            threshold: Double(Microseconds.of(disconnectedFor)) / 1e6, extreme: nil)
    }
}
