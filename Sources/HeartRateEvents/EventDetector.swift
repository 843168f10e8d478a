import Timestamps

/// Finds high, low and contact-lost events in one device's stream of readings, as they come.
///
/// For each kind, a *run* is a sequence of consecutive readings that meet the kind's condition
/// (heart rate strictly above `high`, strictly below `low`, contact reported `false`), none
/// inside a workout. A run ends at a reading that does not meet the condition, at a reading
/// inside a workout, or at a gap longer than the kind's duration between the run's end so far
/// and the next reading's start. A run that lasts at least the kind's duration — from its first
/// reading's start to the latest end of its readings — is an event with that start and end.
///
/// - Readings without a heart rate are ignored by high and low (they neither continue nor end
///   a run), unless inside a workout: a workout ends every run.
/// - A reading whose contact is nil (not reported) is not contact lost: it ends a contact-lost run.
/// - Heart rate counts whatever the contact flag says.
///
/// The event is reported ``EventUpdate/opened(_:)`` by the reading with which its run reaches the
/// duration, ``EventUpdate/extended(_:)`` whenever its extreme changes while open (high and low
/// only; not when its end alone moves), and ``EventUpdate/closed(_:)`` when the run ends. Within
/// one call the updates come kind by kind (high, low, contact lost), a close before an open.
///
/// A detector given the state of another (``openEvents`` and ``pendingRuns``) through
/// ``init(rules:resuming:pendingRuns:)`` reports from then on exactly what the other would have.
public struct EventDetector: Sendable {
    /// The rules the events are found by.
    public let rules: AlertRules
    /// Readings ignored because they started before the previous reading.
    public private(set) var skippedOutOfOrder = 0

    private var high: RunTracker
    private var low: RunTracker
    private var contactLost: RunTracker
    /// The start of the last reading taken; nil before the first.
    private var lastStart: Timestamp?
    /// Events stored as open that no tracker continues (two of one kind): closed at the next call.
    private var eventsToClose: [DetectedEvent] = []

    /// A detector with nothing in progress.
    public init(rules: AlertRules) {
        self.rules = rules
        high = RunTracker(kind: .high, minimum: rules.highFor, threshold: rules.high, extreme: .highest)
        low = RunTracker(kind: .low, minimum: rules.lowFor, threshold: rules.low, extreme: .lowest)
        contactLost = RunTracker(kind: .contactLost, minimum: rules.contactLostFor, threshold: nil, extreme: .none)
    }

    /// A detector that continues, after a restart, the events stored as open (their start, end
    /// so far, threshold and extreme) and, for an exact continuation, the runs that had not yet
    /// lasted their duration (``pendingRuns`` of the detector before).
    ///
    /// The next reading that continues an open event (it meets the condition, is not inside a
    /// workout, and its gap from the stored end so far is not too long) extends the same event,
    /// without a second `.opened` and with its stored threshold and extreme; any other reading
    /// closes it at its stored end so far. The end so far must be the detector's (``openEvents``),
    /// not the one of the last update, which `.extended` does not send for every reading. A
    /// pending run is opened once it lasts its duration. Closed events and battery-low events
    /// are not this detector's and are left out; of two of one kind, the later start is
    /// continued and the other closed at the first call. A resumed detector accepts its first
    /// reading whatever its start.
    public init(rules: AlertRules, resuming openEvents: [DetectedEvent], pendingRuns: [DetectedEvent] = []) {
        self.init(rules: rules)
        let stored = openEvents.map { (event: $0, announced: true) } + pendingRuns.map { (event: $0, announced: false) }
        func resume(_ tracker: inout RunTracker, eventsToClose: inout [DetectedEvent]) {
            let ofKind = stored.filter { $0.event.kind == tracker.kind && $0.event.isOpen }
            guard let latest = ofKind.indices.max(by: { ofKind[$0].event.start < ofKind[$1].event.start }) else { return }
            tracker.resume(ofKind[latest].event, announced: ofKind[latest].announced)
            for (position, entry) in ofKind.enumerated() where position != latest && entry.announced {
                eventsToClose.append(entry.event.closed)
            }
        }
        resume(&high, eventsToClose: &eventsToClose)
        resume(&low, eventsToClose: &eventsToClose)
        resume(&contactLost, eventsToClose: &eventsToClose)
    }

    /// The events open now, with their end so far: what to store to resume after a restart.
    public var openEvents: [DetectedEvent] {
        runs(announced: true)
    }

    /// The runs in progress that have not yet lasted their duration, shaped as events (end nil):
    /// what else to store for a resumed detector to find exactly the same events.
    public var pendingRuns: [DetectedEvent] {
        runs(announced: false)
    }

    /// Takes the next reading, in time order; returns what it opens, extends and closes. A
    /// reading that starts before the previous one is ignored and counted in ``skippedOutOfOrder``.
    public mutating func add(_ reading: EventReading) -> [EventUpdate] {
        if let lastStart, reading.start < lastStart {
            skippedOutOfOrder += 1
            return []
        }
        lastStart = reading.start
        var updates = takeEventsToClose()
        if reading.insideWorkout {
            high.close(into: &updates)
            low.close(into: &updates)
            contactLost.close(into: &updates)
            return updates
        }
        if let heartRate = reading.heartRate {
            high.observe(heartRate > rules.high ? .meets(heartRate) : .breaks, start: reading.start, end: reading.end, into: &updates)
            low.observe(heartRate < rules.low ? .meets(heartRate) : .breaks, start: reading.start, end: reading.end, into: &updates)
        }
        contactLost.observe(reading.contact == false ? .meets(nil) : .breaks, start: reading.start, end: reading.end, into: &updates)
        return updates
    }

    /// Closes the runs whose last reading ended more than their kind's duration before `now`
    /// (a strap gone silent): no later reading could continue them. Exact as long as no reading
    /// still to come starts before `now`.
    public mutating func expire(at now: Timestamp) -> [EventUpdate] {
        var updates = takeEventsToClose()
        high.expire(at: now, into: &updates)
        low.expire(at: now, into: &updates)
        contactLost.expire(at: now, into: &updates)
        return updates
    }

    /// Closes every open event at its last reading's end and drops shorter runs: the end of a
    /// replayed recording. The detector then starts afresh (its count of skipped readings stays).
    public mutating func finish() -> [EventUpdate] {
        var updates = takeEventsToClose()
        high.close(into: &updates)
        low.close(into: &updates)
        contactLost.close(into: &updates)
        lastStart = nil
        return updates
    }

    /// The runs in progress, high, low then contact lost, that have or have not been announced.
    private func runs(announced: Bool) -> [DetectedEvent] {
        var runs: [DetectedEvent] = []
        for tracker in [high, low, contactLost] where tracker.announced == announced {
            if let run = tracker.run { runs.append(run) }
        }
        return runs
    }

    private mutating func takeEventsToClose() -> [EventUpdate] {
        guard !eventsToClose.isEmpty else { return [] }
        defer { eventsToClose = [] }
        return eventsToClose.map { .closed($0) }
    }
}
