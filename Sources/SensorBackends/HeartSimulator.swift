import Glibc

/// A seedable PRNG (SplitMix64): the same seed gives the same sequence on every machine.
public struct SeededGenerator: RandomNumberGenerator, Sendable {
    private var state: UInt64

    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A normally distributed value (Box–Muller).
    mutating func gaussian(mean: Double = 0, deviation: Double = 1) -> Double {
        let u1 = Double.random(in: Double.ulpOfOne..<1, using: &self)
        let u2 = Double.random(in: 0..<1, using: &self)
        return mean + deviation * (-2 * log(u1)).squareRoot() * cos(2 * .pi * u2)
    }
}

/// One stretch of the simulated wearer's day.
public enum Phase: Sendable, Equatable {
    /// Sitting still: heart rate settles at the resting rate.
    case rest(seconds: Double)
    /// Effort from 0 (rest) to 1 (maximum heart rate).
    case exercise(seconds: Double, intensity: Double)
    /// Cooling down after effort: the rate decays towards rest.
    case recovery(seconds: Double)

    var seconds: Double {
        switch self {
        case .rest(let seconds), .exercise(let seconds, _), .recovery(let seconds): seconds
        }
    }

    var intensity: Double {
        if case .exercise(_, let intensity) = self { return intensity }
        return 0
    }
}

/// Settings of one simulated wearer.
public struct HeartSimulatorSettings: Sendable, Equatable {
    public var restingBPM: Double = 62
    public var maxBPM: Double = 185
    public var seed: UInt64 = 1
    public var emitsRRIntervals = true
    /// Chance per second that a lost-contact episode (3–8 s) starts.
    public var contactLossProbability = 0.005
    /// Seconds after start during which contact holds (the strap was just put on).
    public var settlingSeconds = 30.0
    /// Energy expended per beat above resting effort, in joules.
    public var joulesPerBeat = 45.0
    /// The day, repeated: rest, warm-up, steady effort, an interval, recovery.
    public var scenario: [Phase] = [
        .rest(seconds: 60), .exercise(seconds: 60, intensity: 0.35), .exercise(seconds: 120, intensity: 0.6),
        .exercise(seconds: 30, intensity: 0.85), .recovery(seconds: 90),
    ]

    public init() {}
}

/// What a strap would report at one notification.
public struct SimulatedReading: Sendable, Equatable {
    /// Beats per minute as the strap computes it; 0 only when not worn.
    public var heartRate: UInt16
    public var contactDetected: Bool
    /// Cumulative energy expended, kJ (stays at 65535 once reached, as the spec says).
    public var energyExpendedKJ: UInt16
    /// The beats completed since the previous reading, 1/1024 s, oldest first.
    public var rrIntervals: [UInt16]
}

/// The deterministic physiology behind the mock strap. Heart rate follows the phase's target
/// with a first-order lag (faster up than down); beats are generated one by one with
/// respiratory sinus arrhythmia (a 0.25 Hz modulation, larger at rest) and Gaussian noise;
/// the reported rate is 60 over the mean of the last few RR intervals, as straps smooth it.
/// Pure: time is passed in, randomness comes from the seed.
public struct HeartSimulator: Sendable {
    private let settings: HeartSimulatorSettings
    private var random: SeededGenerator
    private var elapsed = 0.0
    /// The underlying rate the heart is heading for, bpm.
    private var rate: Double
    /// When the next beat falls, seconds since start.
    private var nextBeat: Double
    private var pendingIntervals: [UInt16] = []
    private var recentIntervals: [Double] = []
    private var contactLostSince = -1.0
    private var contactLostUntil = -1.0
    private var energyJoules = 0.0

    public init(settings: HeartSimulatorSettings) {
        self.settings = settings
        random = SeededGenerator(seed: settings.seed)
        rate = settings.restingBPM
        nextBeat = 60 / settings.restingBPM
    }

    /// Advances to `elapsed` seconds since start (non-decreasing) and returns the reading a
    /// strap would notify now.
    public mutating func reading(at time: Double) -> SimulatedReading {
        let target = max(time, elapsed)
        while elapsed < target {
            let step = min(0.05, target - elapsed)
            advance(by: step)
        }
        let contact = elapsed >= contactLostUntil
        let intervals = pendingIntervals
        pendingIntervals.removeAll()
        let mean = recentIntervals.isEmpty ? 60 / rate : recentIntervals.reduce(0, +) / Double(recentIntervals.count)
        var heartRate = UInt16(min(220, max(30, (60 / mean).rounded())))
        if !contact {
            // Off the skin: the strap repeats its last rate for two seconds, then sends 0.
            heartRate = elapsed - contactLostSince > 2 ? 0 : heartRate
        }
        let kilojoules = min(65535, energyJoules / 1000)
        return SimulatedReading(
            heartRate: heartRate, contactDetected: contact, energyExpendedKJ: UInt16(kilojoules),
            rrIntervals: contact && settings.emitsRRIntervals ? intervals : [])
    }

    private mutating func advance(by step: Double) {
        let phase = currentPhase
        let target = settings.restingBPM + phase.intensity * (settings.maxBPM - settings.restingBPM)
        let timeConstant = target > rate ? 20.0 : 45.0
        rate += (target - rate) * (1 - exp(-step / timeConstant))
        elapsed += step

        if elapsed >= contactLostUntil, elapsed > settings.settlingSeconds, Double.random(in: 0..<1, using: &random) < settings.contactLossProbability * step {
            contactLostSince = elapsed
            contactLostUntil = elapsed + Double.random(in: 3...8, using: &random)
        }
        while nextBeat <= elapsed {
            let interval = beatInterval(at: nextBeat)
            let raw = UInt16(min(2048, max(272, (interval * 1024).rounded())))
            if elapsed >= contactLostUntil { pendingIntervals.append(raw) }
            recentIntervals.append(interval)
            if recentIntervals.count > 4 { recentIntervals.removeFirst() }
            energyJoules += settings.joulesPerBeat * (0.2 + phase.intensity)
            nextBeat += Double(raw) / 1024
        }
    }

    /// The next RR interval, seconds: the mean interval modulated by breathing and noise,
    /// with more variability at low rates.
    private mutating func beatInterval(at time: Double) -> Double {
        let mean = 60 / rate
        let variability = 0.06 * max(0.2, (settings.maxBPM - rate) / (settings.maxBPM - settings.restingBPM))
        let breathing = variability * sin(2 * .pi * 0.25 * time)
        let noise = random.gaussian(deviation: 0.015 * mean)
        return min(2, max(0.266, mean * (1 + breathing) + noise))
    }

    private var currentPhase: Phase {
        let cycle = settings.scenario.reduce(0) { $0 + $1.seconds }
        guard cycle > 0 else { return .rest(seconds: 0) }
        var offset = elapsed.truncatingRemainder(dividingBy: cycle)
        for phase in settings.scenario {
            if offset < phase.seconds { return phase }
            offset -= phase.seconds
        }
        return settings.scenario[settings.scenario.count - 1]
    }
}
