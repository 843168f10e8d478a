import Timestamps

/// One recording of a waveform from one strap, as HealthKit keeps an `HKElectrocardiogram`: a
/// type (``SampleType/electrocardiogram`` or ``SampleType/acceleration``), the rate the strap
/// sampled at, and integers in the type's unit, one per channel per instant. A recording runs
/// from the moment its stream started to the moment it stopped (the strap disconnected, the
/// recording's duration ran out, hrmd stopped); samples lost on the way leave gaps inside it
/// (``WaveformSegment``).
public struct WaveformRecording: Sendable, Hashable, Identifiable {
    /// The recording's identifier, a UUID.
    public var id: String
    public var type: SampleType
    /// The source that recorded it.
    public var source: String
    /// The strap, as its local identifier.
    public var device: String?
    /// Samples per second of one channel.
    public var frequency: Double
    /// The first sample's time.
    public var start: Timestamp
    /// One sample period after the last sample's time: the recording covers `start ..< end`.
    public var end: Timestamp
    /// The instants recorded (each has one value per channel); gaps hold none.
    public var instantCount: Int
    /// Whether the stream is still being recorded (it grows as it goes).
    public var isOpen: Bool

    public init(
        id: String, type: SampleType, source: String, device: String?, frequency: Double, start: Timestamp, end: Timestamp,
        instantCount: Int, isOpen: Bool
    ) {
        self.id = id
        self.type = type
        self.source = source
        self.device = device
        self.frequency = frequency
        self.start = start
        self.end = end
        self.instantCount = instantCount
        self.isOpen = isOpen
    }

    /// The channels each instant holds a value of, in order.
    public var channels: [String] { type.channels }

    /// How long the recording runs, seconds, gaps included.
    public var duration: Double { Double(end.microsecondsSinceEpoch - start.microsecondsSinceEpoch) / 1e6 }
}

/// Consecutive samples of one recording with no gap between them: a start time and the
/// values, interleaved by instant (`ecg`; or `x`, `y`, `z`, `x`, …). Instant `i` lies
/// `i / frequency` seconds after `start`.
public struct WaveformSegment: Sendable, Hashable {
    /// The first instant's time.
    public var start: Timestamp
    /// The values, `channels` per instant.
    public var values: [Int32]

    public init(start: Timestamp, values: [Int32]) {
        self.start = start
        self.values = values
    }

    /// The instants held, for a waveform of `channels` channels.
    public func instantCount(channels: Int) -> Int { channels > 0 ? values.count / channels : 0 }

    /// Whether `next` starts where this segment ends, to within half a sample period, at
    /// `frequency` samples a second of `channels` channels.
    public func isContinued(by next: WaveformSegment, frequency: Double, channels: Int) -> Bool {
        let expected = time(ofInstant: instantCount(channels: channels), frequency: frequency).microsecondsSinceEpoch
        return abs(next.start.microsecondsSinceEpoch - expected) <= Int64(5e5 / frequency)
    }

    /// The time of instant `index` at `frequency` samples a second.
    public func time(ofInstant index: Int, frequency: Double) -> Timestamp {
        Timestamp(microsecondsSinceEpoch: start.microsecondsSinceEpoch + Int64((Double(index) * 1e6 / frequency).rounded()))
    }
}

/// New samples for a recording, as a recorder hands them to the store: the recording they
/// belong to (created by the first part with its id) and the segments since the last part.
/// A segment that starts where the recording's last one ended, to within half a sample
/// period, continues it; a later one leaves a gap.
public struct WaveformPart: Sendable, Hashable {
    /// The recording: its id, type, source, strap and rate. Its `start`, `end` and
    /// `instantCount` are the store's to keep; `isOpen` false ends the recording.
    public var recording: WaveformRecording
    /// The new samples, in time order.
    public var segments: [WaveformSegment]

    public init(recording: WaveformRecording, segments: [WaveformSegment]) {
        self.recording = recording
        self.segments = segments
    }

    /// Why the store must refuse this part, if it must: values not a whole number of
    /// instants, a rate that is not a positive finite number, a type that is not a waveform,
    /// segments out of order.
    public var problem: String? {
        let recording = recording
        guard recording.type.kind == .waveform else { return "\(recording.type.identifier) is not a waveform type" }
        guard recording.frequency.isFinite, recording.frequency > 0, recording.frequency <= WaveformLimits.highestFrequency else {
            return "a waveform's rate must be within 0 < Hz ≤ \(Int(WaveformLimits.highestFrequency)), not \(recording.frequency)"
        }
        let channels = recording.type.channels.count
        for segment in segments where segment.values.count % channels != 0 {
            return "a segment of \(segment.values.count) values is not a whole number of \(channels)-channel instants"
        }
        for (earlier, later) in zip(segments, segments.dropFirst()) where later.start < earlier.start {
            return "segments out of order"
        }
        return nil
    }
}

/// The bounds the store and its requests hold waveforms to.
public enum WaveformLimits {
    /// The highest rate a recording may declare, Hz (the H10's accelerometer gives 200).
    public static let highestFrequency: Double = 10_000
    /// The most instants one request hands back (an hour of ECG at 130 Hz is 468,000);
    /// longer stretches are read in parts.
    public static let instantsPerAnswer = 500_000
}

/// Which recordings to list: of some waveform types (all when empty), from a strap, in a
/// time range, that a reader may see.
public struct WaveformQuery: Sendable, Hashable {
    public var types: [SampleType]
    public var device: String?
    /// Recordings that end after this time.
    public var since: Timestamp?
    /// Recordings that start before this time.
    public var until: Timestamp?
    /// Who reads; nil reads everything (the store's owner).
    public var reader: String?
    public var limit: Int

    /// The most recordings one query lists.
    public static let answerLimit = 10_000

    public init(
        types: [SampleType] = [], device: String? = nil, since: Timestamp? = nil, until: Timestamp? = nil, reader: String? = nil,
        limit: Int = answerLimit
    ) {
        self.types = types
        self.device = device
        self.since = since
        self.until = until
        self.reader = reader
        self.limit = limit
    }
}

extension Array where Element == WaveformSegment {
    /// Appends `piece`, joined to the last segment when it continues it without a gap.
    public mutating func append(joining piece: WaveformSegment, frequency: Double, channels: Int) {
        if let last = self.last, last.isContinued(by: piece, frequency: frequency, channels: channels) {
            self[count - 1].values.append(contentsOf: piece.values)
        } else {
            append(piece)
        }
    }
}

extension WaveformRecording: Codable {
    enum CodingKeys: String, CodingKey { case id, type, source, device, frequency, start, end, instantCount, open }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let name = try container.decode(String.self, forKey: .type)
        guard let type = SampleType(identifier: name), type.kind == .waveform else {
            throw DecodingError.dataCorruptedError(forKey: .type, in: container, debugDescription: "\(name) is not a waveform type")
        }
        self.init(
            id: try container.decode(String.self, forKey: .id), type: type, source: try container.decode(String.self, forKey: .source),
            device: try container.decodeIfPresent(String.self, forKey: .device), frequency: try container.decode(Double.self, forKey: .frequency),
            start: Timestamp(microsecondsSinceEpoch: try container.decode(Int64.self, forKey: .start)),
            end: Timestamp(microsecondsSinceEpoch: try container.decode(Int64.self, forKey: .end)),
            instantCount: Int(clamping: try container.decode(Int64.self, forKey: .instantCount)), isOpen: try container.decode(Bool.self, forKey: .open))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(type.identifier, forKey: .type)
        try container.encode(source, forKey: .source)
        try container.encodeIfPresent(device, forKey: .device)
        try container.encode(frequency, forKey: .frequency)
        try container.encode(start.microsecondsSinceEpoch, forKey: .start)
        try container.encode(end.microsecondsSinceEpoch, forKey: .end)
        try container.encode(Int64(instantCount), forKey: .instantCount)
        try container.encode(isOpen, forKey: .open)
    }
}

extension WaveformSegment: Codable {
    enum CodingKeys: String, CodingKey { case start, values }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            start: Timestamp(microsecondsSinceEpoch: try container.decode(Int64.self, forKey: .start)),
            values: try container.decode([Int32].self, forKey: .values))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(start.microsecondsSinceEpoch, forKey: .start)
        try container.encode(values, forKey: .values)
    }
}
