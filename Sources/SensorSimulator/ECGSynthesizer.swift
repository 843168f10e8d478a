/// One Gaussian-shaped wave of a heartbeat's P-QRS-T complex, placed relative to the R peak, as
/// in McSharry et al.'s ECGSYN model (2003), there as angles on a one-beat circle, here in seconds.
public struct ECGWave: Sendable, Hashable {
    /// Height at the centre, µV (negative for the Q and S dips).
    public var amplitudeMicrovolts: Double
    /// Time of the centre relative to the R peak, seconds, for a beat that ends an RR interval
    /// of 1 s (negative: before the R peak).
    public var offsetSeconds: Double
    /// Standard deviation of the Gaussian, seconds, for an RR interval of 1 s.
    public var widthSeconds: Double
    /// Whether `offsetSeconds` and `widthSeconds` scale with √RR: true for the T wave, which
    /// comes sooner at higher rates as Bazett's rule has the QT interval do (QT = QTc × √RR).
    public var followsQT: Bool

    /// A wave with the given shape.
    public init(amplitudeMicrovolts: Double, offsetSeconds: Double, widthSeconds: Double, followsQT: Bool = false) {
        self.amplitudeMicrovolts = amplitudeMicrovolts
        self.offsetSeconds = offsetSeconds
        self.widthSeconds = widthSeconds
        self.followsQT = followsQT
    }

    /// The P wave (atrial depolarisation): +150 µV, 160 ms before R, σ 22 ms.
    public static let p = ECGWave(amplitudeMicrovolts: 150, offsetSeconds: -0.160, widthSeconds: 0.022)
    /// The Q dip: −100 µV, 28 ms before R, σ 9 ms.
    public static let q = ECGWave(amplitudeMicrovolts: -100, offsetSeconds: -0.028, widthSeconds: 0.009)
    /// The R peak: +1200 µV at the beat's time, σ 10 ms.
    public static let r = ECGWave(amplitudeMicrovolts: 1200, offsetSeconds: 0, widthSeconds: 0.010)
    /// The S dip: −250 µV, 30 ms after R, σ 10 ms.
    public static let s = ECGWave(amplitudeMicrovolts: -250, offsetSeconds: 0.030, widthSeconds: 0.010)
    /// The T wave (ventricular repolarisation): +300 µV, 280 ms after R and σ 60 ms at RR = 1 s,
    /// both scaled by √RR.
    public static let t = ECGWave(amplitudeMicrovolts: 300, offsetSeconds: 0.280, widthSeconds: 0.060, followsQT: true)
    /// A typical lead-I-like complex of a chest strap: P, Q, R, S, T.
    public static let typicalComplex: [ECGWave] = [.p, .q, .r, .s, .t]

    /// How many standard deviations either side of its centre a wave reaches; beyond them it adds
    /// exactly nothing (e^−8 ≈ 0.03 % of its amplitude is cut off), so that every beat touches a
    /// bounded stretch of samples.
    public static let reachInWidths = 4.0
}

/// Why a beat cannot be added to an ``ECGSynthesizer``.
public enum ECGSynthesisError: Error, Equatable, Hashable, Sendable, CustomStringConvertible {
    /// The beat's time is not a finite number.
    case beatTimeNotFinite(Double)
    /// The beat comes less than the shortest RR interval after the previous beat.
    case beatTooSoon(time: Double, previousBeat: Double, shortestRR: Double)
    /// The beat is at or before a time through which every beat was declared known, so samples
    /// it would touch may already be final.
    case beatAfterItsTime(time: Double, beatsKnownThrough: Double)

    /// One line saying what is wrong, with the numbers.
    public var description: String {
        switch self {
        case .beatTimeNotFinite(let time): "a beat at \(time) s is not at a finite time"
        case .beatTooSoon(let time, let previous, let shortest):
            "a beat at \(time) s comes less than \(shortest) s after the previous one at \(previous) s"
        case .beatAfterItsTime(let time, let known):
            "a beat at \(time) s comes after every beat through \(known) s was said to be known"
        }
    }
}

/// Renders a chest strap's ECG, in µV at a fixed sample rate, from the times of the heart's
/// R peaks. Pure and deterministic: the same settings and beats give the same samples, however
/// the beats and the rendering are split into calls.
///
/// Each beat is a P-QRS-T complex, a sum of ``ECGWave``s in the spirit of ECGSYN, its waves
/// scaled together by a seeded beat-to-beat factor (±2 × `amplitudeVariability`), and its
/// T wave placed by the RR interval that the beat ends (clamped to the shortest and longest RR;
/// the first beat is shaped as at RR = 1 s). To that come a baseline wander at the breathing
/// rate (a sine with a seeded phase) and seeded noise (`noiseMicrovolts` deviation, bounded at
/// six deviations). With the defaults an R peak sample reads 900…1500 µV.
///
/// **Rendering horizon.** Sample *n* is at *n* / `sampleRate` s. A beat at *b* touches the
/// samples from *b* − ``leadSeconds`` (the earliest reach of its waves, the P wave's: 248 ms
/// with the defaults) to the end of its T wave. A sample is final, and rendered, only once
/// no beat still unknown can touch it: it must come before *H* = max(*L* + shortest RR, *K*) −
/// ``leadSeconds``, where *L* is the last beat added (a next beat comes at least the shortest
/// RR later) and *K* the time through which every beat is known (``markBeatsKnown(through:)``;
/// a next beat comes after it). With beats alone, samples become final up to about 18 ms past
/// the last R peak; with *K* they keep becoming final when no beats come (no skin contact).
public struct ECGSynthesizer: Sendable {
    /// How the synthesizer renders.
    public struct Settings: Sendable, Hashable {
        /// Samples per second (a Polar H10 samples its ECG at 130 Hz).
        public var sampleRate: Double
        /// Fixes the noise, the wander's phase and the beats' amplitudes.
        public var seed: UInt64
        /// The waves of every beat.
        public var waves: [ECGWave]
        /// Deviation of the beat-to-beat amplitude factor, as a fraction (bounded at two deviations).
        public var amplitudeVariability: Double
        /// Amplitude of the baseline wander, µV.
        public var baselineWanderMicrovolts: Double
        /// Frequency of the baseline wander (breathing), Hz.
        public var breathingHz: Double
        /// Deviation of the noise on every sample, µV.
        public var noiseMicrovolts: Double
        /// The shortest RR interval, seconds: a beat never comes sooner after the previous one.
        public var shortestRRSeconds: Double
        /// The longest RR interval that shapes a beat, seconds: a longer gap (lost contact)
        /// shapes the beat as this one does.
        public var longestRRSeconds: Double

        /// Settings with the given values; the defaults are a Polar H10's 130 Hz and a typical
        /// complex, and the mock heart's RR limits.
        public init(
            sampleRate: Double = 130, seed: UInt64 = 1, waves: [ECGWave] = ECGWave.typicalComplex,
            amplitudeVariability: Double = 0.03, baselineWanderMicrovolts: Double = 50, breathingHz: Double = 0.25,
            noiseMicrovolts: Double = 10, shortestRRSeconds: Double = HeartSimulator.shortestBeatInterval,
            longestRRSeconds: Double = HeartSimulator.longestBeatInterval
        ) {
            self.sampleRate = sampleRate
            self.seed = seed
            self.waves = waves
            self.amplitudeVariability = amplitudeVariability
            self.baselineWanderMicrovolts = baselineWanderMicrovolts
            self.breathingHz = breathingHz
            self.noiseMicrovolts = noiseMicrovolts
            self.shortestRRSeconds = shortestRRSeconds
            self.longestRRSeconds = longestRRSeconds
        }
    }

    /// One wave of one beat, placed: centre (seconds since start), deviation, height.
    private struct PlacedWave: Sendable {
        var centre: Double
        var width: Double
        var amplitude: Double
        var reach: Double { ECGWave.reachInWidths * width }
    }

    /// A beat's R peak, its waves, and the last time any of them touches.
    private struct Beat: Sendable {
        var peak: Double
        var waves: [PlacedWave]
        var end: Double
    }

    /// The settings, made safe to compute with.
    public let settings: Settings
    /// How long before its R peak a beat's earliest wave begins, seconds.
    public let leadSeconds: Double
    /// How many samples have been rendered (returned) so far.
    public private(set) var renderedSampleCount = 0
    /// The last beat added, seconds since start.
    public private(set) var lastBeat: Double?
    /// Every beat at or before this time has been added.
    public private(set) var beatsKnownThrough = -Double.infinity

    private var beats: [Beat] = []
    private var noise: SeededGenerator
    private var beatAmplitudes: SeededGenerator
    private let wanderPhase: Double

    /// A synthesizer before time 0 with no beats. A sample rate that is not positive and finite
    /// is taken as 130 Hz; negative or NaN amplitudes, deviations and RR limits as 0, and a longest
    /// RR shorter than the shortest as the shortest.
    public init(settings: Settings) {
        var safe = settings
        if !(safe.sampleRate.isFinite && safe.sampleRate > 0) { safe.sampleRate = 130 }
        safe.amplitudeVariability = Self.nonNegative(safe.amplitudeVariability)
        safe.baselineWanderMicrovolts = Self.nonNegative(safe.baselineWanderMicrovolts)
        safe.breathingHz = Self.nonNegative(safe.breathingHz)
        safe.noiseMicrovolts = Self.nonNegative(safe.noiseMicrovolts)
        safe.shortestRRSeconds = Self.nonNegative(safe.shortestRRSeconds)
        safe.longestRRSeconds = max(safe.shortestRRSeconds, Self.nonNegative(safe.longestRRSeconds))
        safe.waves = safe.waves.filter { wave in
            wave.amplitudeMicrovolts.isFinite && wave.offsetSeconds.isFinite && wave.widthSeconds.isFinite && wave.widthSeconds > 0
        }
        self.settings = safe
        leadSeconds = Self.lead(of: safe)
        var random = SeededGenerator(seed: safe.seed)
        noise = random.split()
        beatAmplitudes = random.split()
        wanderPhase = random.nextUnit()
    }

    /// The time of sample `index`, seconds since start.
    public func sampleTime(_ index: Int) -> Double {
        Double(index) / settings.sampleRate
    }

    /// Samples before this time are final: see the rendering horizon in the type's description.
    public var horizon: Double {
        let nextBeatAtTheEarliest = max(lastBeat.map { $0 + settings.shortestRRSeconds } ?? -.infinity, beatsKnownThrough)
        return nextBeatAtTheEarliest - leadSeconds
    }

    /// How many samples are final (rendered or not): those before ``horizon``.
    public var finalSampleCount: Int {
        let horizon = horizon
        guard horizon > sampleTime(renderedSampleCount) else { return renderedSampleCount }
        // The first sample at or after the horizon, from an estimate corrected either way.
        let estimate = (horizon * settings.sampleRate).rounded(.up)
        var count = estimate < Self.sampleCountBound ? max(renderedSampleCount, Int(estimate)) : Int(Self.sampleCountBound)
        while count > renderedSampleCount, sampleTime(count - 1) >= horizon { count -= 1 }
        while count < Int(Self.sampleCountBound), sampleTime(count) < horizon { count += 1 }
        return count
    }

    /// More samples than any run renders (about 240,000 years at 130 Hz); keeps counts in range.
    private static let sampleCountBound = 1e15

    /// Adds the R peak of a beat at `time` seconds since start. Beats come in order: each at
    /// least the shortest RR after the previous, and after any time passed to
    /// ``markBeatsKnown(through:)``.
    /// - Throws: ``ECGSynthesisError``; the beat is then not added.
    public mutating func addBeat(at time: Double) throws(ECGSynthesisError) {
        guard time.isFinite else { throw .beatTimeNotFinite(time) }
        if let lastBeat, time < lastBeat + settings.shortestRRSeconds {
            throw .beatTooSoon(time: time, previousBeat: lastBeat, shortestRR: settings.shortestRRSeconds)
        }
        guard time > beatsKnownThrough else { throw .beatAfterItsTime(time: time, beatsKnownThrough: beatsKnownThrough) }
        let rr = lastBeat.map { min(max(time - $0, settings.shortestRRSeconds), settings.longestRRSeconds) } ?? 1
        let qtScale = rr.squareRoot()
        let deviation = min(max(beatAmplitudes.nextNormal(), -2), 2)
        let factor = 1 + settings.amplitudeVariability * deviation
        let waves = settings.waves.map { wave in
            let scale = wave.followsQT ? qtScale : 1
            return PlacedWave(
                centre: time + wave.offsetSeconds * scale, width: wave.widthSeconds * scale,
                amplitude: wave.amplitudeMicrovolts * factor)
        }
        let end = waves.map { $0.centre + $0.reach }.max() ?? time
        beats.append(Beat(peak: time, waves: waves, end: end))
        lastBeat = time
    }

    /// Declares that every beat at or before `time` seconds since start has been added, so that
    /// the samples no later beat can touch become final even while no beats come. An earlier
    /// time than before, or one not finite, changes nothing.
    public mutating func markBeatsKnown(through time: Double) {
        if time.isFinite, time > beatsKnownThrough { beatsKnownThrough = time }
    }

    /// Renders the final samples not rendered yet, at most `limit` of them, oldest first, in µV.
    public mutating func renderFinalSamples(limit: Int = .max) -> [Int32] {
        let end = renderedSampleCount + min(max(0, limit), finalSampleCount - renderedSampleCount)
        var out: [Int32] = []
        out.reserveCapacity(min(end - renderedSampleCount, 1 << 16))
        while renderedSampleCount < end {
            out.append(render(sample: renderedSampleCount))
            renderedSampleCount += 1
        }
        return out
    }

    /// The value of sample `index` (the next one: the noise is drawn in order), µV.
    private mutating func render(sample index: Int) -> Int32 {
        let time = sampleTime(index)
        // Beats come in order: the first ones are the first to end (one that ended behind a beat
        // still under way adds nothing until it goes), and none after the first whose earliest
        // reach is still to come can reach this sample.
        while let first = beats.first, first.end < time { beats.removeFirst() }
        var value = settings.baselineWanderMicrovolts
            * HeartSimulator.PlainMath.sine(turns: settings.breathingHz * time + wanderPhase)
        value += settings.noiseMicrovolts * noise.nextNormal()
        for beat in beats {
            if beat.peak - leadSeconds > time { break }
            for wave in beat.waves where abs(time - wave.centre) <= wave.reach {
                let z = (time - wave.centre) / wave.width
                value += wave.amplitude * HeartSimulator.PlainMath.decay(z * z / 2)
            }
        }
        let limit = Double(1 << 23 - 1)
        return Int32(min(max(value.rounded(), -limit), limit))
    }

    /// The earliest reach of any wave before its R peak, over the RR intervals that shape beats.
    private static func lead(of settings: Settings) -> Double {
        let scales = [settings.shortestRRSeconds.squareRoot(), settings.longestRRSeconds.squareRoot(), 1]
        var lead = 0.0
        for wave in settings.waves {
            for scale in wave.followsQT ? scales : [1] {
                lead = max(lead, (ECGWave.reachInWidths * wave.widthSeconds - wave.offsetSeconds) * scale)
            }
        }
        return lead
    }

    private static func nonNegative(_ value: Double) -> Double {
        value.isNaN ? 0 : max(0, value)
    }
}
