import Timestamps

/// What a strip measures: the channels its samples interleave and the unit they are in.
public enum WaveformKind: String, Sendable, Hashable, CaseIterable {
    /// An electrocardiogram: one channel, `ECG`, in microvolts.
    case ecg
    /// Acceleration: three channels, `X`, `Y` and `Z`, in milli-g (thousandths of the standard
    /// acceleration of free fall, 9.80665 m/s²).
    case acceleration

    /// The channels' names, in the order their samples interleave.
    public var channelNames: [String] {
        switch self {
        case .ecg: ["ECG"]
        case .acceleration: ["X", "Y", "Z"]
        }
    }

    /// The number of channels: samples per instant.
    public var channelCount: Int { channelNames.count }

    /// The samples' unit as plain ASCII: `uV` or `mg`.
    public var unit: String {
        switch self {
        case .ecg: "uV"
        case .acceleration: "mg"
        }
    }
}

/// A stretch of one strip's samples without a gap: where it starts and its samples.
public struct StripSegment: Sendable, Hashable {
    /// The time of the first instant, nanoseconds since the Unix epoch (UTC).
    public let startNanoseconds: Int64
    /// The samples interleaved by instant: for three channels `x0 y0 z0 x1 y1 z1 …`.
    public let samples: [Int32]

    /// A segment whose first instant is at `startNanoseconds` since the Unix epoch.
    public init(startNanoseconds: Int64, samples: [Int32]) {
        self.startNanoseconds = startNanoseconds
        self.samples = samples
    }

    /// The time of the first instant as the package's time (to the microsecond, rounded down).
    public var start: Timestamp { Timestamp(microsecondsSinceEpoch: floorDivide(startNanoseconds, 1000)) }
}

/// A strip of one waveform from one device: its segments, each sampled at `frequency`, in time
/// order, with gaps (no data) between them. Instant `i` of a segment is at
/// `start + i / frequency`. Every strip is checked when it is made, so the writers can rely on
/// it: at least one segment, none empty, whole instants, a usable frequency, each segment
/// starting after the previous one's last instant, and every instant's time within Int64
/// nanoseconds.
public struct WaveformStrip: Sendable, Hashable {
    /// The recording the strip is of.
    public let recordingID: String
    /// The device that measured it.
    public let deviceID: String
    /// The name of the person who wore the device, when known.
    public let personName: String?
    /// What it measures: the channels and their unit.
    public let kind: WaveformKind
    /// Instants per second (Hz), e.g. 130 for a Polar H10's ECG.
    public let frequency: Double
    /// The stretches of samples, oldest first.
    public let segments: [StripSegment]

    /// The lowest and highest frequency a strip may have (Hz).
    public static let frequencyRange: ClosedRange<Double> = 0.001...1_000_000

    /// Checks and keeps a strip.
    /// - Throws: ``WaveformFileError`` when the strip breaks one of the rules above.
    public init(
        recordingID: String, deviceID: String, personName: String? = nil, kind: WaveformKind, frequency: Double, segments: [StripSegment]
    ) throws(WaveformFileError) {
        guard frequency.isFinite, Self.frequencyRange.contains(frequency) else { throw .unusableFrequency(frequency) }
        guard !segments.isEmpty else { throw .noSegments }
        let channels = kind.channelCount
        var previousLast: Int64?
        for (index, segment) in segments.enumerated() {
            guard !segment.samples.isEmpty else { throw .emptySegment(index: index) }
            guard segment.samples.count % channels == 0 else {
                throw .partialInstant(segment: index, sampleCount: segment.samples.count, channelCount: channels)
            }
            let instants = segment.samples.count / channels
            guard let last = Self.time(ofInstant: instants - 1, from: segment.startNanoseconds, frequency: frequency) else {
                throw .timeOutOfRange(segment: index)
            }
            if let previousLast, segment.startNanoseconds <= previousLast { throw .segmentOutOfOrder(index: index) }
            previousLast = last
        }
        // The writers count from the first instant: the span must be a time too.
        guard let first = segments.first?.startNanoseconds, let previousLast,
              !previousLast.subtractingReportingOverflow(first).overflow
        else { throw .timeOutOfRange(segment: segments.count - 1) }
        self.recordingID = recordingID
        self.deviceID = deviceID
        self.personName = personName
        self.kind = kind
        self.frequency = frequency
        self.segments = segments
    }

    /// Samples per instant.
    public var channelCount: Int { kind.channelCount }

    /// The number of instants in `segment`.
    public func instantCount(of segment: StripSegment) -> Int { segment.samples.count / channelCount }

    /// The number of instants in the whole strip.
    public var instantCount: Int { segments.reduce(0) { $0 + instantCount(of: $1) } }

    /// The time of instant `index` of `segment`, nanoseconds since the Unix epoch (rounded to
    /// the nanosecond).
    public func time(ofInstant index: Int, in segment: StripSegment) -> Int64 {
        // Checked when the strip was made: every instant's time fits.
        Self.time(ofInstant: index, from: segment.startNanoseconds, frequency: frequency) ?? segment.startNanoseconds
    }

    /// The time of the strip's first instant, nanoseconds since the Unix epoch.
    public var firstInstantNanoseconds: Int64 { segments[0].startNanoseconds }

    /// The time of the strip's last instant, nanoseconds since the Unix epoch.
    public var lastInstantNanoseconds: Int64 {
        let last = segments[segments.count - 1]
        return time(ofInstant: instantCount(of: last) - 1, in: last)
    }

    /// Nanoseconds from a segment's first instant to its instant `index`, rounded.
    static func offset(ofInstant index: Int, frequency: Double) -> Int64? {
        let nanoseconds = (Double(index) * 1e9 / frequency).rounded()
        guard nanoseconds < 9.2e18 else { return nil }
        return Int64(nanoseconds)
    }

    /// `nanoseconds` since the epoch as the package's time, to the nearest microsecond.
    static func timestamp(nearest nanoseconds: Int64) -> Timestamp {
        let micros = floorDivide(nanoseconds, 1000)
        return Timestamp(microsecondsSinceEpoch: micros + (nanoseconds - micros * 1000 >= 500 ? 1 : 0))
    }

    static func time(ofInstant index: Int, from start: Int64, frequency: Double) -> Int64? {
        guard let offset = offset(ofInstant: index, frequency: frequency) else { return nil }
        let (time, overflow) = start.addingReportingOverflow(offset)
        return overflow ? nil : time
    }
}

/// Why a waveform strip cannot be made, or cannot be written in a format.
public enum WaveformFileError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The frequency is not finite or outside ``WaveformStrip/frequencyRange``.
    case unusableFrequency(Double)
    /// The strip has no segments.
    case noSegments
    /// Segment `index` has no samples.
    case emptySegment(index: Int)
    /// A segment's samples are not a whole number of instants of `channelCount` samples.
    case partialInstant(segment: Int, sampleCount: Int, channelCount: Int)
    /// Segment `index` starts at or before the previous segment's last instant.
    case segmentOutOfOrder(index: Int)
    /// An instant of segment `segment` (or the strip's span up to it) is beyond what Int64
    /// nanoseconds since the epoch hold.
    case timeOutOfRange(segment: Int)
    /// The strip, with its gaps filled, would be more than `limit` samples in one series.
    case seriesTooLong(instants: Int, limit: Int)
    /// EDF: no data record of a whole number of seconds (up to ``EDFPlusWriter/longestRecordSeconds``)
    /// holds a whole number of samples at this frequency.
    case noWholeSamplesPerRecord(frequency: Double)
    /// EDF: the start's year is outside 1985–2084, the years EDF's two-digit start date names.
    case yearOutsideEDF(year: Int64)
    /// EDF: the strip needs more data records than the header can count
    /// (``EDFPlusWriter/mostRecords``).
    case tooManyEDFRecords(Int)
    /// EDF: a sample is beyond what the 8-character physical minimum and maximum can say
    /// (−9,999,999 to 99,999,999).
    case sampleBeyondEDFRange(Int32)
    /// WFDB: a record name other than letters, digits, `_` and `-` (1 to 64 of them).
    case invalidRecordName(String)
    /// WFDB: a sample is −2³¹, the invalid-sample value of format 32, the widest format.
    case sampleIsWFDBInvalidValue(Int32)

    /// One line saying what is wrong, with the numbers.
    public var description: String {
        switch self {
        case .unusableFrequency(let frequency): "the sampling frequency \(frequency) Hz is not one between 0.001 Hz and 1 MHz"
        case .noSegments: "the strip has no segments"
        case .emptySegment(let index): "segment \(index) has no samples"
        case .partialInstant(let segment, let count, let channels):
            "segment \(segment) has \(count) samples, not a whole number of instants of \(channels) channels"
        case .segmentOutOfOrder(let index): "segment \(index) starts at or before the previous segment's last sample"
        case .timeOutOfRange(let segment): "segment \(segment) reaches beyond the times Int64 nanoseconds since 1970 hold"
        case .seriesTooLong(let instants, let limit):
            "the strip spans \(instants) sample periods with its gaps, more than the \(limit) one series may hold"
        case .noWholeSamplesPerRecord(let frequency):
            "no EDF data record of 1 to \(EDFPlusWriter.longestRecordSeconds) whole seconds holds a whole number of samples at \(frequency) Hz"
        case .yearOutsideEDF(let year): "EDF start dates name the years 1985 to 2084, not \(year)"
        case .tooManyEDFRecords(let count): "the strip needs \(count) EDF data records, more than the header's 99999999"
        case .sampleBeyondEDFRange(let value): "the sample \(value) is beyond what an EDF header's physical range can say (-9999999 to 99999999)"
        case .invalidRecordName(let name): "the WFDB record name \"\(name)\" is not 1 to 64 letters, digits, '_' and '-'"
        case .sampleIsWFDBInvalidValue(let value): "the sample \(value) is WFDB's invalid-sample value in every format that holds it"
        }
    }
}

/// `a / b` rounded down (towards minus infinity), for a positive `b`.
func floorDivide(_ a: Int64, _ b: Int64) -> Int64 {
    let quotient = a / b
    return a % b < 0 ? quotient - 1 : quotient
}
