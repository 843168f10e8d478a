import Timestamps

/// Finds battery-low events in one device's battery levels, with hysteresis: an event opens at
/// the first level strictly under `AlertRules.batteryLow`, and closes at the first level at or
/// above ``recoveryLevel`` (`batteryLow + 5`, at most 100), so that a level wavering around the
/// limit makes one event, not many. Levels between the two change nothing.
///
/// The event starts at the time of the level that opens it and ends at the time of the level
/// that closes it (the battery was changed or charged in between); while open, its end so far
/// is the time of the latest level, its extreme the lowest level, and it is reported
/// `.extended` when that lowest level falls.
public struct BatteryWatch: Sendable {
    /// The level, in percent, under which an event opens.
    public let batteryLow: Int
    /// Levels ignored because they came with a time before the previous level's.
    public private(set) var skippedOutOfOrder = 0
    /// Levels ignored because they were outside 0…100.
    public private(set) var skippedOutOfRange = 0
    /// The event open now, with its end so far: what to store to resume after a restart.
    public private(set) var openEvent: DetectedEvent?
    /// The time of the last level taken; nil before the first.
    private var lastTime: Timestamp?

    /// A watch by `rules.batteryLow`, continuing `openEvent` when one was stored as open
    /// (a closed or other kind of event is left out).
    public init(rules: AlertRules, resuming openEvent: DetectedEvent? = nil) {
        batteryLow = rules.batteryLow
        if let openEvent, openEvent.kind == .batteryLow, openEvent.isOpen {
            self.openEvent = openEvent
        }
    }

    /// The level, in percent, at or above which an open event closes: `batteryLow + 5`, at most 100.
    public var recoveryLevel: Int { min(batteryLow + 5, 100) }

    /// Takes the next battery level (percent) and its time; returns what it opens, extends or closes.
    public mutating func add(level: Int, at time: Timestamp) -> [EventUpdate] {
        guard (0...100).contains(level) else {
            skippedOutOfRange += 1
            return []
        }
        if let lastTime, time < lastTime {
            skippedOutOfOrder += 1
            return []
        }
        lastTime = time
        let percent = Double(level)
        guard var event = openEvent else {
            guard level < batteryLow else { return [] }
            let opened = DetectedEvent(kind: .batteryLow, start: time, end: nil, lastEnd: time, threshold: Double(batteryLow), extreme: percent)
            openEvent = opened
            return [.opened(opened)]
        }
        event.lastEnd = max(event.lastEnd, time)
        if level >= recoveryLevel {
            openEvent = nil
            return [.closed(event.closed)]
        }
        openEvent = event
        guard percent < event.extreme ?? .infinity else { return [] }
        event.extreme = percent
        openEvent = event
        return [.extended(event)]
    }

    /// Closes the open event at the time of its latest level: the end of a replayed recording.
    public mutating func finish() -> [EventUpdate] {
        defer {
            openEvent = nil
            lastTime = nil
        }
        return openEvent.map { [.closed($0.closed)] } ?? []
    }
}
