import HeartRateEvents
import Timestamps

/// SplitMix64: a small seeded generator, so every random sequence can be made again from its seed.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A number in 0..<count (count > 0); the modulo bias is of no matter here.
    mutating func below(_ count: Int) -> Int { Int(next() % UInt64(count)) }

    /// A number in `range`.
    mutating func number(in range: ClosedRange<Int64>) -> Int64 {
        range.lowerBound + Int64(next() % UInt64(range.upperBound - range.lowerBound + 1))
    }

    /// One of `choices` (not empty).
    mutating func pick<Element>(_ choices: [Element]) -> Element { choices[below(choices.count)] }

    /// true or false, evenly.
    mutating func coin() -> Bool { next() & 1 == 0 }
}

/// Seeded random rules and reading lists that stay near the thresholds and the durations.
enum RandomReadings {
    /// 2026-01-01T00:00:00Z, where every sequence starts.
    static let origin: Int64 = 1_767_225_600_000_000

    /// Rules with short durations (3…10 s), so that runs take a few readings.
    static func rules(using generator: inout SplitMix64) -> AlertRules {
        let durations: [Duration] = [.seconds(3), .seconds(5), .milliseconds(7_500), .seconds(10)]
        return AlertRules(
            high: generator.pick([120, 150.5]),
            highFor: generator.pick(durations),
            low: generator.pick([50, 60]),
            lowFor: generator.pick(durations),
            contactLostFor: generator.pick(durations),
            batteryLow: 10)
    }

    /// 0…300 readings: heart rate and contact in regimes that last a while, values at, just
    /// past and well past the thresholds, gaps from overlaps through exactly each duration to
    /// far longer, workout intervals, and (when `outOfOrder`) a few readings that start too early.
    static func readings(rules: AlertRules, outOfOrder: Bool, using generator: inout SplitMix64) -> [EventReading] {
        let count = generator.below(301)
        let durations = [rules.highFor, rules.lowFor, rules.contactLostFor].map {
            $0.components.seconds * 1_000_000 + $0.components.attoseconds / 1_000_000_000_000
        }
        var spans: [(start: Int64, end: Int64)] = []
        var previousStart = origin
        var previousEnd = origin
        for _ in 0..<count {
            let gap: Int64
            switch generator.below(100) {
            case 0..<55: gap = generator.number(in: 0...2_000_000)
            case 55..<63: gap = generator.pick(durations)
            case 63..<68: gap = generator.pick(durations) + 1
            case 68..<72: gap = generator.pick(durations) - 1
            case 72..<85: gap = generator.number(in: 0...30_000_000)
            default: gap = -generator.number(in: 0...1_500_000)
            }
            var start = max(previousEnd + gap, previousStart)
            if outOfOrder, generator.below(40) == 0 {
                start = previousStart - generator.number(in: 1...3_000_000)
            }
            let length = generator.coin() ? generator.number(in: 0...3_000_000) : 1_000_000
            spans.append((start, start + length))
            if start >= previousStart {
                previousStart = start
                previousEnd = start + length
            }
        }
        let workouts = workoutIntervals(over: spans, using: &generator)
        var heartRegime = generator.below(6)
        var contactRegime = generator.below(3)
        return spans.map { span in
            if generator.below(8) == 0 { heartRegime = generator.below(6) }
            if generator.below(8) == 0 { contactRegime = generator.below(3) }
            let heartRate: Double? = generator.below(12) == 0 ? nil : value(regime: heartRegime, rules: rules, using: &generator)
            let contact: Bool?
            switch generator.below(10) == 0 ? generator.below(3) : contactRegime {
            case 0: contact = false
            case 1: contact = true
            default: contact = nil
            }
            return EventReading(
                start: Timestamp(microsecondsSinceEpoch: span.start), end: Timestamp(microsecondsSinceEpoch: span.end),
                heartRate: heartRate, contact: contact,
                insideWorkout: workouts.contains { $0.contains(span.start) })
        }
    }

    /// 0…3 intervals somewhere over the readings' time.
    private static func workoutIntervals(over spans: [(start: Int64, end: Int64)], using generator: inout SplitMix64) -> [Range<Int64>] {
        guard let first = spans.first?.start, let last = spans.map(\.end).max(), last > first else { return [] }
        return (0..<generator.below(4)).map { _ in
            let start = generator.number(in: first...last)
            return start..<(start + generator.number(in: 1...40_000_000))
        }
    }

    /// A heart rate of a regime: above high, at high, between, at low, below low, anywhere.
    private static func value(regime: Int, rules: AlertRules, using generator: inout SplitMix64) -> Double {
        let nudges: [Double] = [0, 0.5, 1, 10]
        let nudge = generator.pick(nudges)
        switch regime {
        case 0: return rules.high + nudge
        case 1: return rules.high + generator.pick([-1, 0, 0, 1]) * nudge
        case 2: return (rules.low + rules.high) / 2 + Double(generator.below(21) - 10)
        case 3: return rules.low - generator.pick([-1, 0, 0, 1]) * nudge
        case 4: return rules.low - nudge
        default: return Double(30 + generator.below(171))
        }
    }
}
