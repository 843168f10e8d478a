import Timestamps

/// What a person was doing in a workout: HealthKit's `HKWorkoutActivityType` names, in kebab
/// case.
public enum WorkoutActivity: String, Sendable, Hashable, Codable, CaseIterable {
    case running
    case cycling
    case walking
    case hiking
    case rowing
    case swimming
    case elliptical
    case stairClimbing = "stair-climbing"
    case hiit
    case strengthTraining = "strength-training"
    case crossTraining = "cross-training"
    case yoga
    case pilates
    case dance
    case boxing
    case other

    /// The `HKWorkoutActivityType` case this activity is.
    public var healthKitName: String {
        switch self {
        case .strengthTraining: "traditionalStrengthTraining"
        case .hiit: "highIntensityIntervalTraining"
        case .dance: "cardioDance"
        default:
            rawValue.split(separator: "-").enumerated().map { $0 == 0 ? String($1) : $1.prefix(1).uppercased() + $1.dropFirst() }.joined()
        }
    }

    /// The activity named `name`, with the known names in the error.
    public static func parse(_ name: String) throws(ModelError) -> WorkoutActivity {
        guard let activity = WorkoutActivity(rawValue: name) else {
            throw ModelError("unknown activity \(name.debugDescription) (known: \(allCases.map(\.rawValue).joined(separator: ", ")))")
        }
        return activity
    }
}

/// Something that happened in a workout, as HealthKit's `HKWorkoutEventType`.
public enum WorkoutEventType: String, Sendable, Hashable, Codable, CaseIterable {
    /// The workout stops counting until the next `resume`.
    case pause
    case resume
    /// The end of a lap: the next starts here.
    case lap
    /// A moment the person marked.
    case marker
    case segmentStart = "segment-start"
    case segmentEnd = "segment-end"
}

/// One event of a workout at a time.
public struct WorkoutEvent: Sendable, Hashable {
    public var type: WorkoutEventType
    public var time: Timestamp

    public init(_ type: WorkoutEventType, at time: Timestamp) {
        self.type = type
        self.time = time
    }
}

/// A workout (HealthKit's `HKWorkout`, built as `HKWorkoutBuilder` builds one): whose it is (a
/// person, or a device when nobody wore it by name), what they did, when it started and
/// ended, and its events in time order. The samples it holds are computed, never copied: the
/// heart-rate samples of its person's straps (or its device) inside its active intervals.
public struct Workout: Sendable, Hashable {
    /// The store's identity of the workout: a UUID, lower case.
    public var id: String
    /// The source that wrote it (`hrmd`, `USER/APP`).
    public var source: String
    public var person: String?
    /// A device's local identifier, when the workout is a device's rather than a person's.
    public var device: String?
    public var activity: WorkoutActivity
    public var start: Timestamp
    /// nil while the workout is open.
    public var end: Timestamp?
    /// In time order.
    public var events: [WorkoutEvent]

    /// The longest a workout may last: a bound on what reading its samples costs.
    public static let longestSeconds: Double = 7 * 24 * 3600
    /// The most events one workout keeps.
    public static let eventLimit = 4096

    public init(
        id: String, source: String, person: String?, device: String?, activity: WorkoutActivity, start: Timestamp, end: Timestamp? = nil,
        events: [WorkoutEvent] = []
    ) {
        self.id = id
        self.source = source
        self.person = person
        self.device = device
        self.activity = activity
        self.start = start
        self.end = end
        self.events = events
    }

    public var isOpen: Bool { end == nil }

    /// Whether the workout is paused after its events so far.
    public var isPaused: Bool {
        events.last { $0.type == .pause || $0.type == .resume }?.type == .pause
    }

    /// Whether a segment is open after the events so far.
    public var inSegment: Bool {
        events.last { $0.type == .segmentStart || $0.type == .segmentEnd }?.type == .segmentStart
    }

    /// Why `event` cannot be added to the workout as it is, or nil when it can: an open
    /// workout takes events in time order, from its start on, each that fits its state (a
    /// `resume` only while paused, a `segment-end` only in a segment).
    public func problem(adding event: WorkoutEvent) -> String? {
        guard isOpen else { return "the workout \(id) has ended" }
        if event.time < start { return "\(event.type.rawValue) at \(event.time) is before the workout's start (\(start))" }
        if let last = events.last, event.time < last.time {
            return "\(event.type.rawValue) at \(event.time) is before the workout's last event (\(last.type.rawValue) at \(last.time))"
        }
        if event.time.secondsSinceEpoch - start.secondsSinceEpoch > Self.longestSeconds {
            return "a workout lasts at most \(Int(Self.longestSeconds / 86400)) days"
        }
        guard events.count < Self.eventLimit else { return "a workout keeps at most \(Self.eventLimit) events" }
        switch event.type {
        case .pause where isPaused: return "the workout is paused already"
        case .resume where !isPaused: return "the workout is not paused"
        case .segmentStart where inSegment: return "a segment is open already; end it first"
        case .segmentEnd where !inSegment: return "no segment is open"
        default: return nil
        }
    }

    /// Why the workout cannot end at `time`, or nil when it can.
    public func problem(endingAt time: Timestamp) -> String? {
        guard isOpen else { return "the workout \(id) has ended" }
        if time < start { return "the end (\(time)) is before the workout's start (\(start))" }
        if let last = events.last, time < last.time { return "the end (\(time)) is before the workout's last event (\(last.type.rawValue) at \(last.time))" }
        if time.secondsSinceEpoch - start.secondsSinceEpoch > Self.longestSeconds {
            return "a workout lasts at most \(Int(Self.longestSeconds / 86400)) days"
        }
        return nil
    }

    /// Why a whole workout (one read from a file, or sent whole) is not one to keep, or nil.
    public var problem: String? {
        if let end, end < start { return "the workout ends (\(end)) before it starts (\(start))" }
        if person == nil && device == nil { return "a workout is a person's or a device's" }
        var built = Workout(id: id, source: source, person: person, device: device, activity: activity, start: start)
        for event in events {
            if let problem = built.problem(adding: event) { return problem }
            built.events.append(event)
        }
        if let end, let problem = built.problem(endingAt: end) { return problem }
        return nil
    }

    /// When the workout counts as ended for its figures: its end, or `now` while it is open.
    public func effectiveEnd(now: Timestamp) -> Timestamp { end ?? max(start, now) }

    /// The intervals in which the workout counts, [start, end) without its pauses, in seconds
    /// since the epoch; an open workout runs until `now`.
    public func activeIntervals(now: Timestamp) -> [TimeSpan] {
        var intervals: [TimeSpan] = []
        var from: Double? = start.secondsSinceEpoch
        for event in events {
            switch event.type {
            case .pause:
                if let begun = from { intervals.append(TimeSpan(begun, event.time.secondsSinceEpoch)) }
                from = nil
            case .resume:
                from = event.time.secondsSinceEpoch
            default: break
            }
        }
        if let begun = from { intervals.append(TimeSpan(begun, effectiveEnd(now: now).secondsSinceEpoch)) }
        return intervals.filter { $0.upper > $0.lower }
    }

    /// The laps: the first starts at the start, each `lap` event ends one and starts the next,
    /// the last ends at the end (or `now`).
    public func laps(now: Timestamp) -> [TimeSpan] {
        let bounds = [start.secondsSinceEpoch] + events.filter { $0.type == .lap }.map(\.time.secondsSinceEpoch)
            + [effectiveEnd(now: now).secondsSinceEpoch]
        return zip(bounds, bounds.dropFirst()).map { TimeSpan($0, $1) }
    }
}

/// An interval of time in seconds since the epoch, [lower, upper).
public struct TimeSpan: Sendable, Hashable {
    public var lower: Double
    public var upper: Double

    public init(_ lower: Double, _ upper: Double) {
        self.lower = lower
        self.upper = max(lower, upper)
    }

    public var seconds: Double { upper - lower }

    public func contains(_ time: Double) -> Bool { time >= lower && time < upper }

    /// The seconds [from, to) shares with this interval.
    public func overlap(_ from: Double, _ to: Double) -> Double { max(0, min(upper, to) - max(lower, from)) }
}

extension Array where Element == TimeSpan {
    /// The index of the first span that ends after `time`, found by halving: the spans are in
    /// time order and apart, as a workout's active intervals and laps are.
    func firstEnding(after time: Double) -> Int {
        var low = 0, high = count
        while low < high {
            let middle = (low + high) / 2
            if self[middle].upper > time { high = middle } else { low = middle + 1 }
        }
        return low
    }

    /// The index of the span that holds `time`, if one does.
    public func index(containing time: Double) -> Int? {
        let index = firstEnding(after: time)
        return index < count && self[index].contains(time) ? index : nil
    }

    /// The indices of the spans that share some time with [from, to).
    public func overlapping(_ from: Double, _ to: Double) -> Range<Int> {
        let first = firstEnding(after: from)
        var end = first
        while end < count, self[end].lower < to { end += 1 }
        return first..<end
    }
}

/// A workout codes as plain values: times in microseconds since the epoch; events as
/// parallel arrays of types and times (so that it travels as one D-Bus dictionary).
extension Workout: Codable {
    enum CodingKeys: String, CodingKey { case id, source, person, device, activity, start, end, eventTypes, eventTimes }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let types = try container.decodeIfPresent([String].self, forKey: .eventTypes) ?? []
        let times = try container.decodeIfPresent([Int64].self, forKey: .eventTimes) ?? []
        guard types.count == times.count else { throw ModelError("a workout's event types and times differ in number") }
        let events = try zip(types, times).map { name, time in
            guard let type = WorkoutEventType(rawValue: name) else { throw ModelError("unknown workout event \(name.debugDescription)") }
            return WorkoutEvent(type, at: Timestamp(microsecondsSinceEpoch: time))
        }
        self.init(
            id: try container.decode(String.self, forKey: .id), source: try container.decode(String.self, forKey: .source),
            person: try container.decodeIfPresent(String.self, forKey: .person),
            device: try container.decodeIfPresent(String.self, forKey: .device),
            activity: try WorkoutActivity.parse(try container.decode(String.self, forKey: .activity)),
            start: Timestamp(microsecondsSinceEpoch: try container.decode(Int64.self, forKey: .start)),
            end: try container.decodeIfPresent(Int64.self, forKey: .end).map(Timestamp.init(microsecondsSinceEpoch:)), events: events)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(source, forKey: .source)
        try container.encodeIfPresent(person, forKey: .person)
        try container.encodeIfPresent(device, forKey: .device)
        try container.encode(activity.rawValue, forKey: .activity)
        try container.encode(start.microsecondsSinceEpoch, forKey: .start)
        try container.encodeIfPresent(end?.microsecondsSinceEpoch, forKey: .end)
        try container.encode(events.map(\.type.rawValue), forKey: .eventTypes)
        try container.encode(events.map(\.time.microsecondsSinceEpoch), forKey: .eventTimes)
    }
}

/// Which workouts to read: those that overlap [since, until), of one person or device, open
/// only or not, as `reader` may see them (nil: every source's, as a manager).
public struct WorkoutQuery: Sendable, Hashable {
    public var since: Timestamp?
    public var until: Timestamp?
    public var person: String?
    public var device: String?
    public var openOnly: Bool
    /// The caller's source: it sees its own workouts and, with read authorization of
    /// `workout`, every other source's. nil: every workout.
    public var reader: String?
    /// The most workouts returned, newest first.
    public var limit: Int

    /// The most workouts one answer holds.
    public static let answerLimit = 1000
    /// The most events one answer holds in all (about 1.5 MB on D-Bus, well within a reply's
    /// 8 MiB): an answer ends before the workout that would pass it, though it always holds one
    /// (a workout keeps at most ``Workout/eventLimit``). Page on with `until` (or the anchor).
    public static let answerEventLimit = 65_536

    public init(
        since: Timestamp? = nil, until: Timestamp? = nil, person: String? = nil, device: String? = nil, openOnly: Bool = false,
        reader: String? = nil, limit: Int = WorkoutQuery.answerLimit
    ) {
        self.since = since
        self.until = until
        self.person = person
        self.device = device
        self.openOnly = openOnly
        self.reader = reader
        self.limit = limit
    }
}

/// One heart-rate sample of a workout as its files hold it: when it started and its value in
/// count/min.
public struct WorkoutPoint: Sendable, Hashable {
    public var time: Timestamp
    public var value: Double

    public init(time: Timestamp, value: Double) {
        self.time = time
        self.value = value
    }
}

extension WorkoutPoint: Codable {
    enum CodingKeys: String, CodingKey { case time, value }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            time: Timestamp(microsecondsSinceEpoch: try container.decode(Int64.self, forKey: .time)),
            value: try container.decode(Double.self, forKey: .value))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(time.microsecondsSinceEpoch, forKey: .time)
        try container.encode(value, forKey: .value)
    }
}

/// The workouts started, changed or deleted after an anchor (HKAnchoredObjectQuery over
/// workouts): each workout as it is now, each deletion by id, in the order of their anchors,
/// and the anchor to ask from next.
public struct WorkoutChangeSet: Sendable, Hashable {
    public var workouts: [Workout]
    /// Ids of deleted workouts.
    public var deleted: [String]
    /// The anchor of the last change in the set; the anchor asked from when it is empty.
    public var anchor: Int64

    public init(workouts: [Workout], deleted: [String], anchor: Int64) {
        self.workouts = workouts
        self.deleted = deleted
        self.anchor = anchor
    }
}

/// What importing a workout did: stored it, or found it stored already (as `id`).
public enum WorkoutImportOutcome: Sendable, Hashable {
    case stored
    case unchanged(id: String)
}

extension Workout {
    /// A new workout id: a random (version 4) UUID in lower case.
    public static func newID() -> String {
        var generator = SystemRandomNumberGenerator()
        var bytes = (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }
        bytes[6] = bytes[6] & 0x0F | 0x40
        bytes[8] = bytes[8] & 0x3F | 0x80
        let hex = bytes.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }
        return [0..<4, 4..<6, 6..<8, 8..<10, 10..<16].map { hex[$0].joined() }.joined(separator: "-")
    }
}
