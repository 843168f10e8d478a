import Foundation
import Timestamps

/// What a workout's heart-rate samples say: its figures, overall and per lap. The counting
/// rules (written down in docs/workouts.md):
///
/// - A sample counts when its start lies in one of the workout's active intervals.
/// - Average, minimum and maximum are over the counted samples' values.
/// - A sample lasts until the next sample of its device, at most ``HeartRateZones/maximumGap``
///   seconds (a device's last sample lasts a second); only the part of that time inside the
///   active intervals (and, per lap, inside the lap) counts towards time in zones, TRIMP and
///   energy.
/// - Recovery: the heart rate at the end (the last sample within 5 s before it) less the heart
///   rate a minute later (the sample nearest to end + 60 s, within 5 s).
public struct WorkoutSummary: Sendable, Hashable {
    public var elapsedSeconds: Double
    public var activeSeconds: Double
    /// nil without any sample.
    public var heartRate: HeartRateFigures?
    /// nil when the person's zones are not known.
    public var zones: [HeartRateZones.Zone]?
    public var laps: [Lap]
    /// count/min the heart rate fell in the minute after the end; nil when not known.
    public var recoveryOneMinute: Double?
    /// nil unless the person's sex, weight and birth year are known.
    public var energyKilocalories: Double?
    /// Banister's training impulse.
    public var trimp: Double

    public init(
        elapsedSeconds: Double, activeSeconds: Double, heartRate: HeartRateFigures?, zones: [HeartRateZones.Zone]?, laps: [Lap],
        recoveryOneMinute: Double?, energyKilocalories: Double?, trimp: Double
    ) {
        self.elapsedSeconds = elapsedSeconds
        self.activeSeconds = activeSeconds
        self.heartRate = heartRate
        self.zones = zones
        self.laps = laps
        self.recoveryOneMinute = recoveryOneMinute
        self.energyKilocalories = energyKilocalories
        self.trimp = trimp
    }

    /// Average, minimum and maximum count/min.
    public struct HeartRateFigures: Sendable, Hashable {
        public var average: Double
        public var minimum: Double
        public var maximum: Double
        /// Samples counted.
        public var count: Int64

        public init(average: Double, minimum: Double, maximum: Double, count: Int64) {
            self.average = average
            self.minimum = minimum
            self.maximum = maximum
            self.count = count
        }
    }

    public struct Lap: Sendable, Hashable {
        public var start: Timestamp
        public var end: Timestamp
        public var activeSeconds: Double
        public var heartRate: HeartRateFigures?
        public var zones: [HeartRateZones.Zone]?

        public init(start: Timestamp, end: Timestamp, activeSeconds: Double, heartRate: HeartRateFigures?, zones: [HeartRateZones.Zone]?) {
            self.start = start
            self.end = end
            self.activeSeconds = activeSeconds
            self.heartRate = heartRate
            self.zones = zones
        }
    }
}

/// What the figures need to know of the person: their zones, and for TRIMP and energy their
/// resting and maximum heart rate, sex, weight and age.
public struct WorkoutPhysiology: Sendable, Hashable {
    public var zoneBounds: ZoneBounds?
    public var restingHeartRate: Double
    public var maximumHeartRate: Double
    public var sex: BiologicalSex?
    public var weightKilograms: Double?
    public var age: Int?

    /// Resting heart rate taken when the person's is not known.
    public static let defaultRestingHeartRate = 60.0
    /// Maximum heart rate taken when neither the person's nor their birth year is known.
    public static let defaultMaximumHeartRate = 190.0

    /// What `person` (nil: nobody) says in `year`.
    public init(person: Person?, year: Int) {
        zoneBounds = person?.zoneBounds(in: year)
        restingHeartRate = person?.restingHeartRate ?? Self.defaultRestingHeartRate
        maximumHeartRate = person?.estimatedMaximumHeartRate(in: year) ?? Self.defaultMaximumHeartRate
        if maximumHeartRate <= restingHeartRate { maximumHeartRate = restingHeartRate + 1 }
        sex = person?.sex
        weightKilograms = person?.weightKilograms
        age = person?.birthYear.map { year - $0 }
    }

    /// Whether energy can be estimated: the sex, weight and age are known.
    var knowsEnergy: Bool { sex != nil && weightKilograms != nil && age != nil }

    /// Banister's TRIMP per minute at `bpm`: HRr × 0.64 × e^(k × HRr), HRr the fraction of the
    /// heart-rate reserve, k 1.92 for men and 1.67 for women (and when the sex is not known).
    func trimpPerMinute(_ bpm: Double) -> Double {
        let reserve = min(1, max(0, (bpm - restingHeartRate) / (maximumHeartRate - restingHeartRate)))
        let k = sex == .male ? 1.92 : 1.67
        return reserve * 0.64 * exp(k * reserve)
    }

    /// Keytel et al. (J Sports Sci 2005) kilocalories per minute at `bpm`; nil without sex,
    /// weight and age. Never negative.
    func kilocaloriesPerMinute(_ bpm: Double) -> Double? {
        guard let sex, let weight = weightKilograms, let age else { return nil }
        let kilojoules =
            switch sex {
            case .male: -55.0969 + 0.6309 * bpm + 0.1988 * weight + 0.2017 * Double(age)
            case .female: -20.4022 + 0.4472 * bpm - 0.1263 * weight + 0.074 * Double(age)
            }
        return max(0, kilojoules / 4.184)
    }
}

extension WorkoutSummary {
    /// Takes a workout's heart-rate samples one at a time (each device's in time order), in
    /// memory that grows with its devices and laps, not with its samples.
    public struct Builder: Sendable {
        private let physiology: WorkoutPhysiology
        private let active: [TimeSpan]
        private let lapSpans: [TimeSpan]
        private let elapsed: Double
        private let end: Double?
        private var overall: Tally
        private var lapTallies: [Tally]
        /// Each device's latest sample, waiting for the next to know how long it lasted.
        private var pending: [String: (time: Double, bpm: Double)] = [:]
        /// The heart rate at the end and a minute later; nil while the workout is open.
        private var recovery: RecoveryTally?

        /// How far from the end, and from a minute after it, a sample may be and still say the
        /// heart rate there.
        public static let recoveryTolerance = RecoveryTally.tolerance

        public init(workout: Workout, physiology: WorkoutPhysiology, now: Timestamp) {
            self.physiology = physiology
            active = workout.activeIntervals(now: now)
            lapSpans = workout.laps(now: now)
            elapsed = workout.effectiveEnd(now: now).secondsSinceEpoch - workout.start.secondsSinceEpoch
            end = workout.end?.secondsSinceEpoch
            recovery = end.map(RecoveryTally.init(end:))
            overall = Tally(bounds: physiology.zoneBounds)
            lapTallies = lapSpans.map { _ in Tally(bounds: physiology.zoneBounds) }
        }

        /// Takes a sample of `bpm` count/min that starts at `time` (seconds) from `device`.
        public mutating func add(_ bpm: Double, at time: Double, device: String) {
            guard bpm.isFinite, bpm > 0 else { return }
            recovery?.add(bpm, at: time)
            if let earlier = pending[device] { credit(earlier.bpm, from: earlier.time, to: earlier.time + min(HeartRateZones.maximumGap, max(0, time - earlier.time))) }
            pending[device] = (time, bpm)
            guard active.index(containing: time) != nil else { return }
            overall.count(bpm)
            if let lap = lapSpans.index(containing: time) { lapTallies[lap].count(bpm) }
        }

        /// Adds the time [from, to) at `bpm` that lies in the active intervals, per lap: only
        /// the few spans it touches are looked at, however many events the workout has.
        private mutating func credit(_ bpm: Double, from: Double, to: Double) {
            guard to > from else { return }
            for span in active[active.overlapping(from, to)] {
                let lower = max(span.lower, from), upper = min(span.upper, to)
                guard upper > lower else { continue }
                overall.credit(bpm, seconds: upper - lower, physiology)
                for lap in lapSpans.overlapping(lower, upper) {
                    let inLap = lapSpans[lap].overlap(lower, upper)
                    if inLap > 0 { lapTallies[lap].credit(bpm, seconds: inLap, physiology) }
                }
            }
        }

        /// The figures of every sample taken.
        public func summary() -> WorkoutSummary {
            var builder = self
            for (_, latest) in pending { builder.credit(latest.bpm, from: latest.time, to: latest.time + 1) }
            let laps = zip(lapSpans, builder.lapTallies).map { span, tally in
                WorkoutSummary.Lap(
                    start: Timestamp(secondsSinceEpoch: span.lower), end: Timestamp(secondsSinceEpoch: span.upper),
                    activeSeconds: active[active.overlapping(span.lower, span.upper)].reduce(0) { $0 + $1.overlap(span.lower, span.upper) },
                    heartRate: tally.figures,
                    zones: tally.zones)
            }
            let recovery = builder.recovery?.drop
            return WorkoutSummary(
                elapsedSeconds: elapsed, activeSeconds: active.reduce(0) { $0 + $1.seconds }, heartRate: builder.overall.figures,
                zones: builder.overall.zones, laps: laps, recoveryOneMinute: recovery,
                energyKilocalories: physiology.knowsEnergy ? builder.overall.kilocalories : nil,
                trimp: builder.overall.trimp)
        }
    }

    /// The figures of one stretch (the whole workout or a lap).
    private struct Tally: Sendable {
        var count = 0
        var sum = 0.0
        var minimum = Double.infinity
        var maximum = -Double.infinity
        var zoneSeconds: [Double]
        let lowers: [Double]?
        var trimp = 0.0
        var kilocalories = 0.0

        init(bounds: ZoneBounds?) {
            lowers = bounds.map { [0] + $0.lowers }
            zoneSeconds = Array(repeating: 0, count: 6)
        }

        mutating func count(_ bpm: Double) {
            count += 1
            sum += bpm
            minimum = min(minimum, bpm)
            maximum = max(maximum, bpm)
        }

        mutating func credit(_ bpm: Double, seconds: Double, _ physiology: WorkoutPhysiology) {
            if let lowers { zoneSeconds[lowers.lastIndex { bpm >= $0 } ?? 0] += seconds }
            trimp += seconds / 60 * physiology.trimpPerMinute(bpm)
            kilocalories += seconds / 60 * (physiology.kilocaloriesPerMinute(bpm) ?? 0)
        }

        var figures: HeartRateFigures? {
            count == 0 ? nil : HeartRateFigures(average: sum / Double(count), minimum: minimum, maximum: maximum, count: Int64(count))
        }

        var zones: [HeartRateZones.Zone]? {
            guard let lowers else { return nil }
            let edges = lowers + [.infinity]
            return (0..<6).map { HeartRateZones.Zone(number: $0, lower: edges[$0], upper: edges[$0 + 1], seconds: zoneSeconds[$0]) }
        }
    }
}

/// A summary codes as plain values: times in microseconds since the epoch, absent figures
/// left out.
extension WorkoutSummary: Codable {}

extension WorkoutSummary.HeartRateFigures: Codable {}

extension WorkoutSummary.Lap: Codable {
    enum CodingKeys: String, CodingKey { case start, end, activeSeconds, heartRate, zones }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            start: Timestamp(microsecondsSinceEpoch: try container.decode(Int64.self, forKey: .start)),
            end: Timestamp(microsecondsSinceEpoch: try container.decode(Int64.self, forKey: .end)),
            activeSeconds: try container.decode(Double.self, forKey: .activeSeconds),
            heartRate: try container.decodeIfPresent(WorkoutSummary.HeartRateFigures.self, forKey: .heartRate),
            zones: try container.decodeIfPresent([HeartRateZones.Zone].self, forKey: .zones))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(start.microsecondsSinceEpoch, forKey: .start)
        try container.encode(end.microsecondsSinceEpoch, forKey: .end)
        try container.encode(activeSeconds, forKey: .activeSeconds)
        try container.encodeIfPresent(heartRate, forKey: .heartRate)
        try container.encodeIfPresent(zones, forKey: .zones)
    }
}

/// The one-minute heart-rate recovery of a workout that ended at `end`: the heart rate at the
/// end (the last sample within 5 s before it) less the heart rate a minute later (the sample
/// nearest to end + 60 s, within 5 s). Fed samples in any order; a sample needs a positive,
/// finite value to count.
public struct RecoveryTally: Sendable {
    /// The workout's end, in seconds since the epoch.
    public let end: Double
    private var atEnd: (time: Double, bpm: Double)?
    private var minuteAfter: (distance: Double, bpm: Double)?

    /// How far from the end, and from a minute after it, a sample may be and still say the
    /// heart rate there: 5 s.
    public static let tolerance = 5.0
    /// The latest sample the figure reads, after the end: 65 s.
    public static let reach = 60 + tolerance

    public init(end: Double) { self.end = end }

    /// Takes a sample of `bpm` count/min that starts at `time` (seconds since the epoch).
    public mutating func add(_ bpm: Double, at time: Double) {
        guard bpm.isFinite, bpm > 0 else { return }
        if time < end, time >= end - Self.tolerance, time >= (atEnd?.time ?? -.infinity) { atEnd = (time, bpm) }
        let distance = abs(time - (end + 60))
        if distance <= Self.tolerance, distance < (minuteAfter?.distance ?? .infinity) { minuteAfter = (distance, bpm) }
    }

    /// count/min the heart rate fell in the minute after the end; nil without a sample at
    /// either time.
    public var drop: Double? { atEnd.flatMap { atEnd in minuteAfter.map { atEnd.bpm - $0.bpm } } }
}
