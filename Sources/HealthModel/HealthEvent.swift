import Timestamps

/// Something that happened to a wearer or a strap over a time, with no quantity: HealthKit's
/// category sample (`HKCategorySample`), as `HKCategoryTypeIdentifierHighHeartRateEvent` and
/// its kin. hrmd writes them itself (source `hrmd`); applications read them with read
/// authorization of their type, and never write them.
public struct HealthEvent: Sendable, Hashable {
    /// The event's identity (a UUID, lower case).
    public var id: String
    /// One of ``SampleType/eventTypes``.
    public var type: SampleType
    public var source: String
    /// The strap it concerns (its local identifier).
    public var device: String?
    /// Who wore the strap when the event started, when anyone did.
    public var person: String?
    public var start: Timestamp
    /// When it ended; nil while it lasts (open).
    public var end: Timestamp?
    /// The end of the last reading it covers so far: the end once closed, and where it would
    /// close if nothing continued it (after a restart, or when the strap falls silent).
    public var latest: Timestamp
    /// The rule's threshold (count/min for heart-rate events; percent for battery).
    public var threshold: Double?
    /// The highest (high event) or lowest (low event, battery) value it covered.
    public var extreme: Double?

    public init(
        id: String, type: SampleType, source: String, device: String?, person: String?, start: Timestamp, end: Timestamp?,
        latest: Timestamp, threshold: Double? = nil, extreme: Double? = nil
    ) {
        self.id = id
        self.type = type
        self.source = source
        self.device = device
        self.person = person
        self.start = start
        self.end = end
        self.latest = latest
        self.threshold = threshold
        self.extreme = extreme
    }

    /// Whether it still lasts.
    public var isOpen: Bool { end == nil }

    /// What is wrong with it as a stored event, if anything.
    public var problem: String? {
        if type.kind != .category { return "\(type.identifier) is not an event type" }
        if latest < start { return "the event ends before it starts" }
        if let end, end != latest { return "a closed event's end is its latest reading's end" }
        if device == nil && person == nil { return "an event names a strap or a person" }
        return nil
    }
}

extension SampleType {
    /// Whether `source` may be granted to store samples of this type: events and figures are
    /// hrmd's alone.
    public func mayBeShared(by source: String) -> Bool {
        (kind != .category && !isDerived) || source == HealthSource.eventWriter
    }

    /// The event type named `name`, with the known ones in the error.
    public static func eventType(named name: String) throws(ModelError) -> SampleType {
        guard let type = SampleType(identifier: name), type.kind == .category else {
            throw ModelError("unknown event type \(name.debugDescription) (known: \(eventTypes.map(\.identifier).joined(separator: ", ")))")
        }
        return type
    }
}

/// Which events to read: those of `types` that overlap [since, until), of `person` or
/// `device` when given, newest start first.
public struct EventQuery: Sendable, Hashable {
    /// The types asked for; empty: every event type.
    public var types: [SampleType]
    public var since: Timestamp?
    public var until: Timestamp?
    public var person: String?
    public var device: String?
    /// Only the events that still last.
    public var openOnly: Bool
    /// The caller's source: it sees the events of the types it may read (a source reads its
    /// own events always). nil: every event.
    public var reader: String?
    /// The most events returned, newest start first.
    public var limit: Int

    /// The most events one answer holds.
    public static let answerLimit = 10_000

    public init(
        types: [SampleType] = [], since: Timestamp? = nil, until: Timestamp? = nil, person: String? = nil, device: String? = nil,
        openOnly: Bool = false, reader: String? = nil, limit: Int = EventQuery.answerLimit
    ) {
        self.types = types
        self.since = since
        self.until = until
        self.person = person
        self.device = device
        self.openOnly = openOnly
        self.reader = reader
        self.limit = limit
    }
}

extension HealthEvent: Codable {
    enum CodingKeys: String, CodingKey { case id, type, source, device, person, start, end, latest, threshold, extreme }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let type = try SampleType.eventType(named: try container.decode(String.self, forKey: .type))
        self.init(
            id: try container.decode(String.self, forKey: .id), type: type, source: try container.decode(String.self, forKey: .source),
            device: try container.decodeIfPresent(String.self, forKey: .device),
            person: try container.decodeIfPresent(String.self, forKey: .person),
            start: Timestamp(microsecondsSinceEpoch: try container.decode(Int64.self, forKey: .start)),
            end: try container.decodeIfPresent(Int64.self, forKey: .end).map(Timestamp.init(microsecondsSinceEpoch:)),
            latest: Timestamp(microsecondsSinceEpoch: try container.decode(Int64.self, forKey: .latest)),
            threshold: try container.decodeIfPresent(Double.self, forKey: .threshold),
            extreme: try container.decodeIfPresent(Double.self, forKey: .extreme))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(type.identifier, forKey: .type)
        try container.encode(source, forKey: .source)
        try container.encodeIfPresent(device, forKey: .device)
        try container.encodeIfPresent(person, forKey: .person)
        try container.encode(start.microsecondsSinceEpoch, forKey: .start)
        try container.encodeIfPresent(end?.microsecondsSinceEpoch, forKey: .end)
        try container.encode(latest.microsecondsSinceEpoch, forKey: .latest)
        try container.encodeIfPresent(threshold, forKey: .threshold)
        try container.encodeIfPresent(extreme, forKey: .extreme)
    }
}
