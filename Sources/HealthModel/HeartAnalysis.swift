import Timestamps

/// How many samples one analysis (zones, HRV) reads at most, in every store: past it the
/// analysis stops and is refused, so that a request over a range of any length costs a bounded
/// time. Memory does not grow with the samples read: analyses stream through the
/// accumulators below.
public enum HeartAnalysisBudget {
    public static let samples = 20_000_000
}

/// Heart-rate variability of a run of beats (the time-domain measures of the Task Force of
/// the ESC/NASPE, 1996).
public struct HeartRateVariability: Codable, Sendable, Hashable {
    /// Beats (RR intervals) used.
    public var beats: Int
    /// Mean of the RR intervals, milliseconds.
    public var meanNN: Double
    /// Standard deviation of the RR intervals, milliseconds.
    public var sdnn: Double
    /// Root mean square of successive differences, over adjacent beats only, milliseconds;
    /// nil when no two beats are adjacent.
    public var rmssd: Double?

    /// The variability of `beats`, in order: mean NN and SDNN over every interval, RMSSD
    /// over the successive differences of the beats not preceded by a gap (each with the beat
    /// before it in the list).
    public init?(beats: [BeatInterval]) {
        var accumulator = Accumulator()
        var previous: Double?
        for beat in beats {
            accumulator.add(beat.milliseconds, after: beat.precededByGap ? nil : previous)
            previous = beat.milliseconds
        }
        guard let variability = accumulator.variability else { return nil }
        self = variability
    }

    /// The measures taken one beat at a time, in constant memory whatever the number of beats
    /// (Welford's running mean and variance, and the running sum of squared successive
    /// differences): what a store streams its series through.
    public struct Accumulator: Sendable {
        private var count = 0
        private var mean = 0.0
        private var squaredDeviations = 0.0
        private var squaredDifferences = 0.0
        private var pairs = 0

        public init() {}

        /// Takes the next beat of a series; `previous` is the beat before it when the two are
        /// adjacent (no gap between them), nil otherwise.
        public mutating func add(_ milliseconds: Double, after previous: Double?) {
            count += 1
            let delta = milliseconds - mean
            mean += delta / Double(count)
            squaredDeviations += delta * (milliseconds - mean)
            if let previous {
                let difference = milliseconds - previous
                squaredDifferences += difference * difference
                pairs += 1
            }
        }

        /// The measures of the beats so far; nil before the first.
        public var variability: HeartRateVariability? {
            guard count > 0 else { return nil }
            return HeartRateVariability(
                beats: count, meanNN: mean, sdnn: (squaredDeviations / Double(max(1, count - 1))).squareRoot(),
                rmssd: pairs > 0 ? (squaredDifferences / Double(pairs)).squareRoot() : nil)
        }
    }

    /// The variability of `intervals` (RR samples in time order). Successive differences are
    /// taken only between beats of one device that follow each other: the later one starts
    /// within half an interval of where the earlier one ends (beat times placed from
    /// notification times jitter by tens of milliseconds; a missed beat or lost contact
    /// leaves a gap of a whole interval or more, which does not count).
    public init?(intervals: [QuantitySample]) {
        var beats: [BeatInterval] = []
        var sequence = BeatInterval.Sequence()
        for interval in intervals {
            guard let milliseconds = try? interval.quantity.doubleValue(for: .millisecond) else { continue }
            let follows = sequence.next(
                device: interval.device?.localIdentifier, start: interval.start.microsecondsSinceEpoch,
                end: interval.end.microsecondsSinceEpoch, milliseconds: milliseconds) != nil
            beats.append(BeatInterval(milliseconds: milliseconds, precededByGap: !follows))
        }
        self.init(beats: beats)
    }
}

/// One beat of a heartbeat series as heart-rate variability reads it: the RR interval that
/// ends at it, and whether it is preceded by a gap (HKHeartbeatSeriesSample's flag: the
/// interval before it in the series is not its predecessor).
public struct BeatInterval: Sendable, Hashable {
    /// The interval ending at this beat, milliseconds.
    public var milliseconds: Double
    public var precededByGap: Bool

    public init(milliseconds: Double, precededByGap: Bool) {
        self.milliseconds = milliseconds
        self.precededByGap = precededByGap
    }

    /// RR intervals in time order, one at a time: says of each whether it follows the one
    /// before with no beat missed (same device, and `follows`).
    public struct Sequence: Sendable {
        private var previous: (device: String?, end: Int64, milliseconds: Double)?

        public init() {}

        /// Takes the next interval; returns the one before it (milliseconds) when this one
        /// follows it, nil after a gap.
        public mutating func next(device: String?, start: Int64, end: Int64, milliseconds: Double) -> Double? {
            defer { previous = (device, end, milliseconds) }
            guard let earlier = previous, earlier.device == device,
                  BeatInterval.follows(earlierEnd: earlier.end, earlierMilliseconds: earlier.milliseconds,
                                       laterStart: start, laterMilliseconds: milliseconds)
            else { return nil }
            return earlier.milliseconds
        }
    }

    /// An interval of `milliseconds` in microseconds, rounded as the ingest pipeline places
    /// beats: where a beat sample ends, `start + microseconds(value)`, in every store.
    public static func microseconds(_ milliseconds: Double) -> Int64 {
        let micros = (milliseconds * 1000).rounded()
        return micros.isFinite && abs(micros) < 9e18 ? Int64(micros) : 0
    }

    /// Whether an interval that starts at `laterStart` follows one that ends at `earlierEnd`
    /// with no beat missed: it starts within half the shorter of the two of where the other
    /// ends (beat times placed from notification times jitter by tens of milliseconds; a
    /// missed beat or lost contact leaves a whole interval or more).
    public static func follows(earlierEnd: Int64, earlierMilliseconds: Double, laterStart: Int64, laterMilliseconds: Double) -> Bool {
        Double(abs(laterStart &- earlierEnd)) / 1000 < 0.5 * min(earlierMilliseconds, laterMilliseconds)
    }
}

/// Time spent in heart-rate zones, as fractions of a maximum heart rate.
public struct HeartRateZones: Sendable, Hashable {
    /// One zone: [lower, upper) count/min and the seconds spent in it.
    public struct Zone: Codable, Sendable, Hashable {
        public var number: Int
        public var lower: Double
        public var upper: Double
        public var seconds: Double

        public init(number: Int, lower: Double, upper: Double, seconds: Double) {
            self.number = number
            self.lower = lower
            self.upper = upper
            self.seconds = seconds
        }
    }

    /// Zone 0 is below 50 % of the maximum; zones 1–5 are 50–60, 60–70, 70–80, 80–90 and
    /// 90–100 %; above the maximum counts in zone 5.
    public var zones: [Zone]

    /// The longest a sample is taken to last when the next one is further away (lost contact).
    public static let maximumGap = 5.0

    /// Each heart-rate sample lasts until the next one of the same device (at most
    /// `maximumGap` seconds).
    public init(samples: [QuantitySample], maximumHeartRate: Double) {
        var accumulator = Accumulator(maximumHeartRate: maximumHeartRate)
        for sample in samples {
            guard let bpm = try? sample.quantity.doubleValue(for: .countPerMinute) else { continue }
            accumulator.add(bpm, at: sample.start.secondsSinceEpoch, device: sample.device?.localIdentifier ?? "")
        }
        self = accumulator.zones
    }

    /// The time in zones taken one sample at a time, in memory that grows with the devices and
    /// not with the samples: each device's latest sample waits for the next to know how long
    /// it lasted. Samples of one device come in time order.
    public struct Accumulator: Sendable {
        private var totals: [Zone]
        /// Each device's latest sample: when it started and its zone.
        private var pending: [String: (start: Double, zone: Int)] = [:]
        /// Whether any sample came.
        public private(set) var isEmpty = true

        public init(maximumHeartRate: Double) {
            self.init(bounds: ZoneBounds(maximumHeartRate: maximumHeartRate))
        }

        /// Zones that start at `bounds` (zone 0 from 0, zone 5 without an upper end).
        public init(bounds: ZoneBounds) {
            let edges = [0] + bounds.lowers + [.infinity]
            totals = (0..<6).map { index in Zone(number: index, lower: edges[index], upper: edges[index + 1], seconds: 0) }
        }

        /// Takes a sample of `bpm` count/min that starts at `start` (seconds) from `device`.
        public mutating func add(_ bpm: Double, at start: Double, device: String) {
            isEmpty = false
            if let earlier = pending[device] {
                totals[earlier.zone].seconds += max(0, min(HeartRateZones.maximumGap, start - earlier.start))
            }
            pending[device] = (start, totals.lastIndex { bpm >= $0.lower } ?? 0)
        }

        /// The zones so far, each device's latest sample counted as lasting a second.
        public var zones: HeartRateZones {
            var zones = totals
            for latest in pending.values { zones[latest.zone].seconds += 1 }
            return HeartRateZones(zones: zones)
        }
    }
}
