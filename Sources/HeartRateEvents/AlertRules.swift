import Timestamps

/// When heart rate, sensor contact and battery become events: the thresholds, and how long a
/// condition must last before it is an event. The `[alerts]` section of `hrmd.conf` sets them;
/// a person's own high and low limits override them (``overriding(high:low:)``).
///
/// A value holds whatever it is given; ``problem()`` says whether the rules are usable, and
/// the configuration refuses rules that are not.
public struct AlertRules: Sendable, Equatable {
    /// Heart rate strictly above this, in count/min, is high.
    public var high: Double
    /// How long heart rate must stay high before it is a high event.
    public var highFor: Duration
    /// Heart rate strictly below this, in count/min, is low.
    public var low: Double
    /// How long heart rate must stay low before it is a low event.
    public var lowFor: Duration
    /// How long a strap must report no skin contact before it is a contact-lost event.
    public var contactLostFor: Duration
    /// A battery level strictly under this, in percent, opens a battery-low event.
    public var batteryLow: Int
    /// How long a strap's link must stay down before it is a disconnected event.
    public var disconnectedFor: Duration

    /// Rules with every value given.
    public init(
        high: Double, highFor: Duration, low: Double, lowFor: Duration, contactLostFor: Duration, batteryLow: Int,
        disconnectedFor: Duration = .seconds(60)
    ) {
        self.high = high
        self.highFor = highFor
        self.low = low
        self.lowFor = lowFor
        self.contactLostFor = contactLostFor
        self.batteryLow = batteryLow
        self.disconnectedFor = disconnectedFor
    }

    /// The rules without an `[alerts]` section: above 120 or below 40 count/min for 10 minutes,
    /// contact lost for 30 seconds, battery under 10 %, a link down for a minute.
    public static let defaults = AlertRules(
        high: 120, highFor: .seconds(600), low: 40, lowFor: .seconds(600), contactLostFor: .seconds(30), batteryLow: 10)

    /// The heart rates, in count/min, that `high` and `low` may be.
    public static let heartRateRange: ClosedRange<Double> = 20...250
    /// The durations that `highFor`, `lowFor`, `contactLostFor` and `disconnectedFor` may be: 1 s to 24 h.
    public static let durationRange: ClosedRange<Duration> = .seconds(1) ... .seconds(86_400)
    /// The percentages that `batteryLow` may be.
    public static let batteryLowRange: ClosedRange<Int> = 1...99

    /// What makes these rules unusable, in one line naming the value by its `[alerts]` key;
    /// nil when they are usable: `high` and `low` in ``heartRateRange`` with `low` below `high`,
    /// each duration in ``durationRange``, `batteryLow` in ``batteryLowRange``.
    public func problem() -> String? {
        for (key, value) in [("high", high), ("low", low)] where !Self.heartRateRange.contains(value) {
            return "\(key) \(Self.text(of: value)) count/min is outside \(Self.heartRateRangeText)"
        }
        guard low < high else { return "low \(Self.text(of: low)) count/min is not below high \(Self.text(of: high)) count/min" }
        for (key, value) in [("high-for", highFor), ("low-for", lowFor), ("contact-lost-for", contactLostFor), ("disconnected-for", disconnectedFor)]
        where !Self.durationRange.contains(value) {
            return "\(key) \(Self.text(of: value)) is outside \(Self.durationRangeText)"
        }
        guard Self.batteryLowRange.contains(batteryLow) else {
            return "battery-low \(batteryLow) % is outside \(Self.batteryLowRangeText)"
        }
        return nil
    }

    /// These rules with a person's own limits in place of `high` and `low` (nil keeps the
    /// rule's); check the result with ``problem()``.
    public func overriding(high: Double?, low: Double?) -> AlertRules {
        var rules = self
        if let high { rules.high = high }
        if let low { rules.low = low }
        return rules
    }

    /// The duration `text` writes: plain seconds (`90`, `2.5`) or an amount with a unit as
    /// `TimeExpression.seconds(in:)` reads it (`30s`, `10m`, `1h`); to the microsecond. Nil for
    /// anything else, a negative amount, infinity or NaN. The range is not checked here.
    public static func duration(parsing text: String) -> Duration? {
        guard let seconds = Double(text) ?? TimeExpression.seconds(in: text), seconds.isFinite, seconds >= 0, seconds <= 9e12 else {
            return nil
        }
        return .microseconds(Int64((seconds * 1_000_000).rounded()))
    }

    /// A duration as the configuration writes it: `10m`, `1h`, `30s`, `0.5s`.
    public static func text(of duration: Duration) -> String {
        let micros = Microseconds.of(duration)
        if micros != 0, micros % 3_600_000_000 == 0 { return "\(micros / 3_600_000_000)h" }
        if micros != 0, micros % 60_000_000 == 0 { return "\(micros / 60_000_000)m" }
        if micros % 1_000_000 == 0 { return "\(micros / 1_000_000)s" }
        return "\(Double(micros) / 1_000_000)s"
    }

    /// A heart rate or percentage as messages write it: `120`, `72.5`, `nan`.
    static func text(of value: Double) -> String {
        if value.isFinite, value == value.rounded(), abs(value) < 1e15 { return "\(Int64(value))" }
        return "\(value)"
    }

    /// ``heartRateRange`` as errors write it.
    public static let heartRateRangeText = "20…250 count/min"
    /// ``durationRange`` as errors write it.
    public static let durationRangeText = "1s…24h"
    /// ``batteryLowRange`` as errors write it.
    public static let batteryLowRangeText = "1…99 %"
}
