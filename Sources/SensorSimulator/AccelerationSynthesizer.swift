import PMDDecoding

/// Renders a chest strap's 3-axis acceleration, in milli-g at a fixed sample rate, from the
/// wearer's effort (0 resting … 1 flat out). Pure and deterministic: the same settings and
/// efforts give the same samples, however the rendering is split into calls.
///
/// The model works in the wearer's frame — vertical (up), lateral, forward — and turns it into
/// the strap's axes by a seeded tilt of at most `largestTiltDegrees` forward and sideways, so
/// that an upright wearer's gravity (+`gravityMilliG` on the vertical axis, what an
/// accelerometer at rest reads) falls mostly on the strap's x axis and a little on y and z.
/// On top of gravity:
/// - breathing: the chest rises and falls at `breathingHz`, `breathingMilliG` on the forward axis
///   and a quarter of that vertically;
/// - steps: with effort *e* (smoothed with a first-order lag of `effortTimeConstantSeconds`, so
///   that a new phase ramps in), a cadence of 2.5 + 0.5 × *e* Hz and a vertical bounce of
///   *e* × `stepMilliGAtFullEffort` (with a second harmonic of 30 %), a forward surge of a
///   quarter of that a quarter cycle later and a sideways sway of a fifth of it at half the
///   cadence (left and right steps);
/// - seeded noise of `noiseMilliG` deviation on each axis (bounded at six deviations).
/// Values are rounded and kept within ±`rangeG` × 1000 mG (and int16). At rest the magnitude averages
/// `gravityMilliG` within a few mG.
public struct AccelerationSynthesizer: Sendable {
    /// How the synthesizer renders.
    public struct Settings: Sendable, Hashable {
        /// Samples per second (a Polar H10 offers 25, 50, 100 and 200 Hz).
        public var sampleRate: Double
        /// Fixes the tilt, the breathing phase and the noise.
        public var seed: UInt64
        /// Gravity, mG.
        public var gravityMilliG: Double
        /// The largest tilt of the strap from upright, forward or sideways, degrees.
        public var largestTiltDegrees: Double
        /// Breathing rate, Hz.
        public var breathingHz: Double
        /// Breathing motion of the chest on the forward axis, mG.
        public var breathingMilliG: Double
        /// Vertical bounce of each step at full effort, mG.
        public var stepMilliGAtFullEffort: Double
        /// Seconds for the motion to close 63 % of the gap to a new effort.
        public var effortTimeConstantSeconds: Double
        /// Deviation of the noise on each axis, mG.
        public var noiseMilliG: Double
        /// The accelerometer's range, ±G: values are clipped to it.
        public var rangeG: Double

        /// Settings with the given values; the defaults are 50 Hz and ±8 G, as the mock strap
        /// streams.
        public init(
            sampleRate: Double = 50, seed: UInt64 = 1, gravityMilliG: Double = 1000, largestTiltDegrees: Double = 10,
            breathingHz: Double = 0.25, breathingMilliG: Double = 8, stepMilliGAtFullEffort: Double = 600,
            effortTimeConstantSeconds: Double = 2, noiseMilliG: Double = 3, rangeG: Double = 8
        ) {
            self.sampleRate = sampleRate
            self.seed = seed
            self.gravityMilliG = gravityMilliG
            self.largestTiltDegrees = largestTiltDegrees
            self.breathingHz = breathingHz
            self.breathingMilliG = breathingMilliG
            self.stepMilliGAtFullEffort = stepMilliGAtFullEffort
            self.effortTimeConstantSeconds = effortTimeConstantSeconds
            self.noiseMilliG = noiseMilliG
            self.rangeG = rangeG
        }
    }

    /// Cadence at no effort and its growth to full effort, Hz.
    static let restingCadenceHz = 2.5
    static let cadenceGainHz = 0.5

    /// The settings, made safe to compute with.
    public let settings: Settings
    /// How many samples have been rendered so far.
    public private(set) var renderedSampleCount = 0

    private var noise: SeededGenerator
    private let breathingPhase: Double
    /// Sine and cosine of the forward (pitch) and sideways (roll) tilt.
    private let pitch: (sine: Double, cosine: Double)
    private let roll: (sine: Double, cosine: Double)
    /// The effort the motion has reached; nil before the first sample.
    private var effort: Double?
    /// Step cycles so far, in turns (kept within 0…2: two steps make one left-right sway).
    private var stepPhase = 0.0

    /// A synthesizer at time 0. A sample rate that is not positive and finite is taken as 50 Hz;
    /// negative or NaN amounts as 0, a range of 0 as 8 G.
    public init(settings: Settings) {
        var safe = settings
        if !(safe.sampleRate.isFinite && safe.sampleRate > 0) { safe.sampleRate = 50 }
        safe.gravityMilliG = Self.nonNegative(safe.gravityMilliG)
        safe.largestTiltDegrees = min(Self.nonNegative(safe.largestTiltDegrees), 90)
        safe.breathingHz = Self.nonNegative(safe.breathingHz)
        safe.breathingMilliG = Self.nonNegative(safe.breathingMilliG)
        safe.stepMilliGAtFullEffort = Self.nonNegative(safe.stepMilliGAtFullEffort)
        safe.effortTimeConstantSeconds = Self.nonNegative(safe.effortTimeConstantSeconds)
        safe.noiseMilliG = Self.nonNegative(safe.noiseMilliG)
        if !(safe.rangeG.isFinite && safe.rangeG > 0) { safe.rangeG = 8 }
        self.settings = safe
        var random = SeededGenerator(seed: safe.seed)
        noise = random.split()
        breathingPhase = random.nextUnit()
        let pitchTurns = (2 * random.nextUnit() - 1) * safe.largestTiltDegrees / 360
        let rollTurns = (2 * random.nextUnit() - 1) * safe.largestTiltDegrees / 360
        pitch = Self.sineAndCosine(turns: pitchTurns)
        roll = Self.sineAndCosine(turns: rollTurns)
    }

    /// The time of sample `index`, seconds since start.
    public func sampleTime(_ index: Int) -> Double {
        Double(index) / settings.sampleRate
    }

    /// Renders the next `count` samples, oldest first; `effort` gives the wearer's effort
    /// (0…1, clamped; NaN as 0) at each sample's time, seconds since start.
    public mutating func render(count: Int, effort: (Double) -> Double) -> [PMDAccSample] {
        var out: [PMDAccSample] = []
        out.reserveCapacity(min(max(0, count), 1 << 16))
        for _ in 0..<max(0, count) {
            out.append(renderNext(effort: effort))
        }
        return out
    }

    /// Renders the samples not rendered yet whose time is at or before `time` seconds since start.
    public mutating func render(through time: Double, effort: (Double) -> Double) -> [PMDAccSample] {
        var out: [PMDAccSample] = []
        while time.isFinite, sampleTime(renderedSampleCount) <= time {
            out.append(renderNext(effort: effort))
        }
        return out
    }

    /// The next sample.
    private mutating func renderNext(effort target: (Double) -> Double) -> PMDAccSample {
        let interval = 1 / settings.sampleRate
        let time = sampleTime(renderedSampleCount)
        renderedSampleCount += 1
        let wanted = Self.unitInterval(target(time))
        let reached: Double
        if let effort {
            let closing = settings.effortTimeConstantSeconds > 0
                ? 1 - HeartSimulator.PlainMath.decay(interval / settings.effortTimeConstantSeconds) : 1
            reached = effort + (wanted - effort) * closing
        } else {
            reached = wanted
        }
        effort = reached

        let sine = HeartSimulator.PlainMath.sine(turns:)
        let bounce = reached * settings.stepMilliGAtFullEffort
        let step = sine(stepPhase) + 0.3 * sine(2 * stepPhase)
        let breath = sine(settings.breathingHz * time + breathingPhase)
        let vertical = settings.gravityMilliG + bounce * step + settings.breathingMilliG / 4 * breath
        let forward = bounce / 4 * sine(stepPhase + 0.25) + settings.breathingMilliG * breath
        let lateral = bounce / 5 * sine(stepPhase / 2)
        stepPhase += (Self.restingCadenceHz + Self.cadenceGainHz * reached) * interval
        if stepPhase >= 2 { stepPhase -= 2 }

        // Tilt forward (vertical into forward), then sideways (vertical into lateral).
        let pitchedVertical = vertical * pitch.cosine - forward * pitch.sine
        let pitchedForward = vertical * pitch.sine + forward * pitch.cosine
        let x = pitchedVertical * roll.cosine - lateral * roll.sine
        let y = pitchedVertical * roll.sine + lateral * roll.cosine
        let z = pitchedForward
        return PMDAccSample(x: axis(x), y: axis(y), z: axis(z))
    }

    /// One axis value with noise, rounded and clipped to the range.
    private mutating func axis(_ value: Double) -> Int32 {
        let limit = min(settings.rangeG * 1000, Double(Int16.max))
        let noisy = value + settings.noiseMilliG * noise.nextNormal()
        return Int32(min(max(noisy.rounded(), -limit), limit))
    }

    private static func sineAndCosine(turns: Double) -> (sine: Double, cosine: Double) {
        (HeartSimulator.PlainMath.sine(turns: turns), HeartSimulator.PlainMath.sine(turns: turns + 0.25))
    }

    private static func unitInterval(_ value: Double) -> Double {
        value.isNaN ? 0 : min(max(value, 0), 1)
    }

    private static func nonNegative(_ value: Double) -> Double {
        value.isNaN ? 0 : max(0, value)
    }
}
