/// One stretch of a simulated wearer's scenario. A duration that is not a positive, finite
/// number of seconds makes the phase take no time.
public enum Phase: Sendable, Equatable {
    /// Sitting still: the heart settles towards the resting rate.
    case rest(seconds: Double)
    /// Effort from 0 (resting) to 1 (flat out): the heart heads for that fraction of the way
    /// from the resting to the maximum rate.
    case exercise(seconds: Double, intensity: Double)
    /// Cooling down after effort: the heart heads back to the resting rate, which it
    /// approaches more slowly than it sped up.
    case recovery(seconds: Double)

    /// How long the phase lasts, seconds; 0 when the duration is not positive and finite.
    public var seconds: Double {
        let seconds: Double
        switch self {
        case .rest(let duration), .exercise(let duration, _), .recovery(let duration): seconds = duration
        }
        return seconds.isFinite && seconds > 0 ? seconds : 0
    }

    /// The effort, 0…1: an exercise's intensity kept within that range; 0 for rest and recovery.
    public var intensity: Double {
        guard case .exercise(_, let intensity) = self, !intensity.isNaN else { return 0 }
        return intensity.clamped(to: 0...1)
    }
}

/// Settings of one simulated wearer.
public struct HeartSimulatorSettings: Sendable, Equatable {
    /// The rate at rest, bpm (the mock's `bpm` key); used within 30…220.
    public var restingBPM: Double
    /// The rate at full effort, bpm; used within the resting rate…220.
    public var maxBPM: Double
    /// Fixes every random choice: the same settings and the same reading times give the same
    /// readings.
    public var seed: UInt64
    /// Whether readings carry RR intervals (the mock's `rr` key).
    public var emitsRRIntervals: Bool
    /// The chance, drawn once every whole second, that a lost-contact episode of 3–8 s starts
    /// (the mock's `contact-loss` key); used within 0…1.
    public var contactLossProbability: Double
    /// Seconds after start during which contact always holds: the strap was just put on.
    public var settlingSeconds: Double
    /// Energy per detected beat at rest, joules; it grows in proportion to effort, to three times
    /// as much at the maximum rate. With the defaults that is about 5 kJ a minute at rest and
    /// 45 kJ a minute flat out.
    public var energyPerBeatJoules: Double
    /// The scenario, repeated for as long as the simulator runs.
    public var scenario: [Phase]

    /// A minute of rest, a minute's warm-up, two minutes of steady effort, a 30 s interval and
    /// a minute and a half of recovery: six minutes in all.
    public static let defaultScenario: [Phase] = [
        .rest(seconds: 60),
        .exercise(seconds: 60, intensity: 0.35),
        .exercise(seconds: 120, intensity: 0.6),
        .exercise(seconds: 30, intensity: 0.85),
        .recovery(seconds: 90),
    ]

    /// Settings with the given values; the defaults describe a fit adult on the default
    /// scenario who loses contact about once every three minutes.
    public init(
        restingBPM: Double = 62, maxBPM: Double = 185, seed: UInt64 = 1, emitsRRIntervals: Bool = true,
        contactLossProbability: Double = 0.005, settlingSeconds: Double = 30, energyPerBeatJoules: Double = 80,
        scenario: [Phase] = HeartSimulatorSettings.defaultScenario
    ) {
        self.restingBPM = restingBPM
        self.maxBPM = maxBPM
        self.seed = seed
        self.emitsRRIntervals = emitsRRIntervals
        self.contactLossProbability = contactLossProbability
        self.settlingSeconds = settlingSeconds
        self.energyPerBeatJoules = energyPerBeatJoules
        self.scenario = scenario
    }
}

/// What a strap would report at one notification.
public struct SimulatedReading: Sendable, Equatable {
    /// Beats per minute as the strap computes it (rounded), within 30…220; 0 only when not
    /// worn.
    public var heartRate: UInt16
    /// Whether the strap is on the skin.
    public var contactDetected: Bool
    /// Cumulative energy expended, kJ. Once it reaches 65535 it stays there, as the Heart Rate
    /// Service specification asks, so that a client knows to reset it.
    public var energyExpendedKJ: UInt16
    /// The RR intervals of the beats completed since the previous reading, 1/1024 s, oldest
    /// first, each within 272…2048; none while contact is lost.
    public var rrIntervals: [UInt16]

    /// A reading with the given values.
    public init(heartRate: UInt16, contactDetected: Bool, energyExpendedKJ: UInt16, rrIntervals: [UInt16]) {
        self.heartRate = heartRate
        self.contactDetected = contactDetected
        self.energyExpendedKJ = energyExpendedKJ
        self.rrIntervals = rrIntervals
    }
}

/// The deterministic physiology behind the mock strap. Pure: time is passed in and randomness
/// comes from the seed.
///
/// The heart's underlying rate follows the scenario's target with a first-order lag, faster up
/// than down. Beats come one at a time: each RR interval is the underlying rate's interval
/// modulated by breathing (respiratory sinus arrhythmia at 0.25 Hz) and noise, both smaller at
/// higher effort, and their running sum gives the beat times. The strap reports the RR
/// intervals between detected beats and 60 over the mean of the last four as the rate. Beats,
/// and lost-contact episodes (drawn on whole seconds), do not depend on how often readings are
/// taken.
public struct HeartSimulator: Sendable {
    /// The RR intervals the heart makes, 1/1024 s.
    static let intervalRange: ClosedRange<Double> = 272...2048
    /// The shortest time between two beats, seconds (272/1024 s, 226 bpm).
    public static let shortestBeatInterval = intervalRange.lowerBound / 1024
    /// The longest time between two beats, seconds (2048/1024 s, 30 bpm).
    public static let longestBeatInterval = intervalRange.upperBound / 1024

    private let wearer: Wearer
    private var heart: Heart
    private var contact: ContactEpisodes
    private var strap: Strap
    private var now = 0.0

    /// A simulator at time 0 with the heart at the resting rate.
    public init(settings: HeartSimulatorSettings) {
        wearer = Wearer(settings)
        var random = SeededGenerator(seed: settings.seed)
        heart = Heart(wearer: wearer, random: random.split())
        contact = ContactEpisodes(wearer: wearer, random: random.split())
        strap = Strap(wearer: wearer)
    }

    /// Advances simulated time to `elapsed` seconds since start and returns the reading a strap
    /// would notify now. Calls may come at any rate; a time earlier than the last one, or not
    /// finite, does not move the clock.
    public mutating func reading(at elapsed: Double) -> SimulatedReading {
        advance(to: elapsed) { _ in }
    }

    /// The same reading as ``reading(at:)``, also appending to `detectedBeats` the times (seconds
    /// since start, oldest first) of the beats that fell since the previous reading and that
    /// the strap detected: the R peaks an ECG shows. Beats while contact is lost are not
    /// appended. Every beat at or before the reading's time has then been handed over, so the
    /// next one falls later, and at least ``shortestBeatInterval`` after the previous beat.
    public mutating func reading(at elapsed: Double, detectedBeats: inout [Double]) -> SimulatedReading {
        advance(to: elapsed) { detectedBeats.append($0) }
    }

    /// The effort, 0…1, that the scenario's phase under way at `elapsed` seconds since start
    /// asks for (the heart follows it with a lag; the body moves with it at once).
    public func scenarioEffort(at elapsed: Double) -> Double {
        wearer.scenario.intensity(at: elapsed)
    }

    /// Moves time on to `elapsed`, passing each detected beat's time to `detected`.
    private mutating func advance(to elapsed: Double, detected: (Double) -> Void) -> SimulatedReading {
        if elapsed.isFinite, elapsed > now { now = elapsed }
        while heart.nextBeat <= now {
            contact.advance(to: heart.nextBeat)
            let beat = heart.beat()
            let heard = contact.isDetected(at: beat.time)
            strap.hear(interval: beat.interval, detected: heard, effort: wearer.effort(atRate: heart.rate))
            if heard { detected(beat.time) }
        }
        contact.advance(to: now)
        return strap.reading(at: now, contact: contact, underlyingBPM: heart.rate)
    }
}

// The parts of the model, each with one job.
extension HeartSimulator {
    /// The settings made safe to compute with: rates within 30…220 bpm with the maximum not below
    /// the resting rate, a chance within 0…1, nothing negative or NaN.
    struct Wearer: Sendable {
        let restingBPM: Double
        let maxBPM: Double
        let emitsRRIntervals: Bool
        let contactLossProbability: Double
        let settlingSeconds: Double
        let energyPerBeatJoules: Double
        let scenario: Scenario

        init(_ settings: HeartSimulatorSettings) {
            restingBPM = settings.restingBPM.isFinite ? settings.restingBPM.clamped(to: 30...220) : 62
            maxBPM = (settings.maxBPM.isFinite ? settings.maxBPM : 185).clamped(to: restingBPM...220)
            emitsRRIntervals = settings.emitsRRIntervals
            let chance = settings.contactLossProbability
            contactLossProbability = chance.isNaN ? 0 : chance.clamped(to: 0...1)
            settlingSeconds = settings.settlingSeconds.isNaN ? 0 : max(0, settings.settlingSeconds)
            energyPerBeatJoules = settings.energyPerBeatJoules.isFinite ? max(0, settings.energyPerBeatJoules) : 0
            scenario = Scenario(settings.scenario)
        }

        /// The rate the scenario asks for at `time`, bpm.
        func targetBPM(at time: Double) -> Double {
            restingBPM + scenario.intensity(at: time) * (maxBPM - restingBPM)
        }

        /// How far `rate` is from resting towards maximum, 0…1.
        func effort(atRate rate: Double) -> Double {
            guard maxBPM > restingBPM else { return 0 }
            return ((rate - restingBPM) / (maxBPM - restingBPM)).clamped(to: 0...1)
        }
    }

    /// The scenario's phases laid end to end and repeated.
    struct Scenario: Sendable {
        private let phases: [Phase]
        private let cycle: Double

        init(_ phases: [Phase]) {
            self.phases = phases.filter { $0.seconds > 0 }
            cycle = self.phases.reduce(0) { $0 + $1.seconds }
        }

        /// The effort the phase under way at `time` asks for, 0…1; rest when there are no phases.
        func intensity(at time: Double) -> Double {
            guard cycle > 0, cycle.isFinite else { return phases.first?.intensity ?? 0 }
            var offset = max(0, time).truncatingRemainder(dividingBy: cycle)
            for phase in phases {
                if offset < phase.seconds { return phase.intensity }
                offset -= phase.seconds
            }
            return phases[phases.count - 1].intensity
        }
    }

    /// The wearer's heart: an underlying rate that follows the scenario with a first-order lag,
    /// and the beats it makes.
    struct Heart: Sendable {
        /// Seconds for the rate to close 63 % of the gap to a higher target.
        static let riseTimeConstant = 20.0
        /// The same towards a lower target: the heart slows down more slowly than it speeds up.
        static let fallTimeConstant = 45.0
        /// The breathing rate, Hz, at which respiratory sinus arrhythmia modulates the intervals.
        static let breathingHz = 0.25
        /// How deeply breathing modulates the interval at rest, as a fraction of it.
        static let breathingDepth = 0.05
        /// The deviation of beat-to-beat noise at rest, as a fraction of the interval.
        static let noiseDeviation = 0.02
        /// The share of the resting variability left at maximum effort.
        static let variabilityAtMax = 0.2

        private let wearer: Wearer
        private var random: SeededGenerator
        /// The underlying rate, bpm.
        private(set) var rate: Double
        /// When the next beat falls, seconds since start.
        private(set) var nextBeat = 0.0
        /// The RR interval that the next beat completes, 1/1024 s.
        private var nextInterval: UInt16 = 1024

        /// A heart at the resting rate that beat at time 0.
        init(wearer: Wearer, random: SeededGenerator) {
            self.wearer = wearer
            self.random = random
            rate = wearer.restingBPM
            schedule(after: 0)
        }

        /// Moves on to the next beat; returns when it falls and the RR interval it completes.
        mutating func beat() -> (time: Double, interval: UInt16) {
            let time = nextBeat
            let interval = nextInterval
            follow(wearer.targetBPM(at: time), over: Double(interval) / 1024)
            schedule(after: time)
            return (time, interval)
        }

        /// Moves the rate towards `target` as a first-order lag would over `seconds`.
        private mutating func follow(_ target: Double, over seconds: Double) {
            let timeConstant = target > rate ? Self.riseTimeConstant : Self.fallTimeConstant
            rate += (target - rate) * (1 - PlainMath.decay(seconds / timeConstant))
        }

        /// Draws the interval after a beat at `time`: the rate's interval, lengthened and
        /// shortened by breathing and noise, which shrink as effort grows.
        private mutating func schedule(after time: Double) {
            let variability = 1 - (1 - Self.variabilityAtMax) * wearer.effort(atRate: rate)
            let breathing = Self.breathingDepth * PlainMath.sine(turns: Self.breathingHz * time)
            let noise = Self.noiseDeviation * random.nextNormal()
            let seconds = 60 / rate * (1 + variability * (breathing + noise))
            nextInterval = UInt16((seconds * 1024).rounded().clamped(to: HeartSimulator.intervalRange))
            nextBeat = time + Double(nextInterval) / 1024
        }
    }

    /// When the strap is off the skin. At each whole second after settling, unless an episode is
    /// under way, one of 3–8 s starts with the wearer's chance. Episodes come from their own
    /// stream on whole seconds, so they do not depend on when readings are taken.
    struct ContactEpisodes: Sendable {
        static let shortestEpisode = 3.0
        static let longestEpisode = 8.0

        private let chance: Double
        private let settlingSeconds: Double
        private var random: SeededGenerator
        /// The next whole second at which an episode may start.
        private var nextDraw = 1
        /// When the latest episode started, seconds since start.
        private(set) var lostSince = -Double.infinity
        /// When the latest episode ends.
        private var lostUntil = -Double.infinity

        init(wearer: Wearer, random: SeededGenerator) {
            chance = wearer.contactLossProbability
            settlingSeconds = wearer.settlingSeconds
            self.random = random
        }

        /// Draws the episodes that start by `time`.
        mutating func advance(to time: Double) {
            while Double(nextDraw) <= time {
                let second = Double(nextDraw)
                nextDraw += 1
                let roll = random.nextUnit()
                guard second > settlingSeconds, second >= lostUntil, roll < chance else { continue }
                let length = Self.shortestEpisode + (Self.longestEpisode - Self.shortestEpisode) * random.nextUnit()
                lostSince = second
                lostUntil = second + length
            }
        }

        /// Whether the strap is on the skin at `time`, which `advance(to:)` has reached.
        func isDetected(at time: Double) -> Bool {
            time < lostSince || time >= lostUntil
        }
    }

    /// What the strap makes of the beats: the RR interval between two detected beats, a rate
    /// smoothed over the last few such intervals, and the energy counter.
    struct Strap: Sendable {
        /// How many recent intervals the reported rate averages.
        static let smoothingWindow = 4
        /// How long after contact is lost the strap keeps reporting its last rate before 0.
        static let holdSeconds = 2.0

        private let emitsRRIntervals: Bool
        private let energyPerBeatJoules: Double
        /// Whether the strap detected the latest beat; it locked onto one at time 0.
        private var previousDetected = true
        private var recent: [UInt16] = []
        private var unreported: [UInt16] = []
        private var energyJoules = 0.0

        init(wearer: Wearer) {
            emitsRRIntervals = wearer.emitsRRIntervals
            energyPerBeatJoules = wearer.energyPerBeatJoules
        }

        /// Takes in a beat that completed `interval` at `effort` (0…1). An undetected beat counts
        /// for nothing, and the first detected one after it has no interval the strap could time.
        mutating func hear(interval: UInt16, detected: Bool, effort: Double) {
            defer { previousDetected = detected }
            guard detected else { return }
            energyJoules += energyPerBeatJoules * (1 + 2 * effort)
            guard previousDetected else { return }
            unreported.append(interval)
            recent.append(interval)
            if recent.count > Self.smoothingWindow { recent.removeFirst() }
        }

        /// The notification at `time`, handing over the intervals not yet reported.
        /// `underlyingBPM` stands in for the rate until the strap has timed a beat.
        mutating func reading(at time: Double, contact: ContactEpisodes, underlyingBPM: Double) -> SimulatedReading {
            let intervals = unreported
            unreported.removeAll(keepingCapacity: true)
            let detected = contact.isDetected(at: time)
            let shown = detected || time - contact.lostSince < Self.holdSeconds ? smoothedBPM(else: underlyingBPM) : 0
            return SimulatedReading(
                heartRate: shown, contactDetected: detected,
                energyExpendedKJ: UInt16((energyJoules / 1000).rounded(.down).clamped(to: 0...65535)),
                rrIntervals: detected && emitsRRIntervals ? intervals : [])
        }

        /// 60 over the mean of the recent intervals, rounded, within 30…220.
        private func smoothedBPM(else fallback: Double) -> UInt16 {
            var bpm = fallback
            if !recent.isEmpty {
                let total = recent.reduce(0) { $0 + Double($1) }
                bpm = 60 * 1024 * Double(recent.count) / total
            }
            return UInt16(bpm.rounded().clamped(to: 30...220))
        }
    }

    /// The two transcendental functions the model needs, in plain Swift: no libm, and the same
    /// bits on every platform.
    enum PlainMath {
        /// e^−x for x ≥ 0 (1 for smaller x): x is halved until at most ½, the Taylor series summed
        /// and the result squared back.
        static func decay(_ x: Double) -> Double {
            guard x > 0 else { return 1 }
            guard x < 745 else { return 0 }
            var reduced = x
            var halvings = 0
            while reduced > 0.5 {
                reduced /= 2
                halvings += 1
            }
            var term = 1.0
            var sum = 1.0
            for n in 1...14 {
                term *= -reduced / Double(n)
                sum += term
            }
            for _ in 0..<halvings { sum *= sum }
            return sum
        }

        /// sin(2π · `turns`): the angle is folded into a quarter turn either side of 0 and the
        /// Taylor series summed.
        static func sine(turns: Double) -> Double {
            guard turns.isFinite else { return 0 }
            var folded = turns - turns.rounded()
            if folded > 0.25 {
                folded = 0.5 - folded
            } else if folded < -0.25 {
                folded = -0.5 - folded
            }
            let angle = 2 * Double.pi * folded
            var term = angle
            var sum = angle
            for n in stride(from: 2, through: 16, by: 2) {
                term *= -angle * angle / Double(n * (n + 1))
                sum += term
            }
            return sum
        }
    }
}

extension Comparable {
    /// The value moved into `range` if outside it.
    fileprivate func clamped(to range: ClosedRange<Self>) -> Self {
        min(max(self, range.lowerBound), range.upperBound)
    }
}
