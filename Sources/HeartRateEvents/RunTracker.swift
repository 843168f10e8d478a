import Timestamps

/// One kind's run in progress: consecutive readings that meet the kind's condition, and
/// whether the run has lasted long enough to have been announced as an open event.
struct RunTracker: Sendable {
    /// What one reading does to a run.
    enum Verdict {
        /// The reading meets the condition, with the value its extreme is taken from.
        case meets(Double?)
        /// The reading ends the run and is part of none.
        case breaks
    }

    /// Which of a run's values is its extreme.
    enum Extreme: Sendable {
        case highest, lowest, none
    }

    let kind: EventKind
    /// How long a run must last to be an event, and the longest gap within one.
    let minimumMicroseconds: Int64
    let threshold: Double?
    let extremeRule: Extreme
    /// The run so far, shaped as the open event it is or will be (`end` nil).
    private(set) var run: DetectedEvent?
    /// Whether ``run`` has been reported as opened.
    private(set) var announced = false

    init(kind: EventKind, minimum: Duration, threshold: Double?, extreme: Extreme) {
        self.kind = kind
        self.minimumMicroseconds = Microseconds.of(minimum)
        self.threshold = threshold
        self.extremeRule = extreme
    }

    /// Continues a run stored before a restart, announced or not.
    mutating func resume(_ stored: DetectedEvent, announced: Bool) {
        var event = stored
        event.end = nil
        run = event
        self.announced = announced
    }

    /// Takes one reading's verdict; reports what it opens, extends or closes.
    mutating func observe(_ verdict: Verdict, start: Timestamp, end: Timestamp, into updates: inout [EventUpdate]) {
        switch verdict {
        case .breaks:
            close(into: &updates)
        case .meets(let value):
            if let run, Microseconds.from(run.lastEnd, to: start) > minimumMicroseconds {
                close(into: &updates)
            }
            if var continued = run {
                continued.lastEnd = max(continued.lastEnd, end)
                let extreme = moreExtreme(continued.extreme, value)
                let extremeChanged = extreme != continued.extreme
                continued.extreme = extreme
                run = continued
                if announced && extremeChanged { updates.append(.extended(continued)) }
            } else {
                run = DetectedEvent(kind: kind, start: start, end: nil, lastEnd: end, threshold: threshold, extreme: value)
                announced = false
            }
            announceIfLongEnough(into: &updates)
        }
    }

    /// Ends the run when no reading can continue it any more: its last reading ended more
    /// than the kind's duration before `now`.
    mutating func expire(at now: Timestamp, into updates: inout [EventUpdate]) {
        guard let run, Microseconds.from(run.lastEnd, to: now) > minimumMicroseconds else { return }
        close(into: &updates)
    }

    /// Ends the run: an announced one is closed at its last end, a shorter one dropped.
    mutating func close(into updates: inout [EventUpdate]) {
        announceIfLongEnough(into: &updates)
        if let run, announced { updates.append(.closed(run.closed)) }
        run = nil
        announced = false
    }

    /// Opens the run once it has lasted the kind's duration (from the first start to the
    /// latest end). Closing also checks, for a run resumed unannounced under shorter rules.
    private mutating func announceIfLongEnough(into updates: inout [EventUpdate]) {
        guard !announced, let run, Microseconds.from(run.start, to: run.lastEnd) >= minimumMicroseconds else { return }
        announced = true
        updates.append(.opened(run))
    }

    private func moreExtreme(_ current: Double?, _ value: Double?) -> Double? {
        guard let current else { return value }
        guard let value else { return current }
        switch extremeRule {
        case .highest: return max(current, value)
        case .lowest: return min(current, value)
        case .none: return nil
        }
    }
}
