/// Capped exponential backoff with jitter, for reconnecting to a sensor: the first retry
/// after ``initial``, each later one twice as long up to ``maximum``, each spread by
/// ±``jitter`` so that many sensors dropped together do not retry in step.
/// ``reset()`` after a connection that worked.
public struct Backoff: Sendable, Hashable {
    public var initial: Double
    public var maximum: Double
    /// The fraction (0…1) by which a delay may randomly grow or shrink.
    public var jitter: Double
    private var failures = 0

    /// Delays from `initial` seconds doubling up to `maximum`, spread by `jitter`.
    public init(initial: Double = 1, maximum: Double = 60, jitter: Double = 0.2) {
        self.initial = initial
        self.maximum = maximum
        self.jitter = jitter
    }

    /// The delay in seconds before the next attempt, counting one more failure.
    public mutating func nextDelay(using generator: inout some RandomNumberGenerator) -> Double {
        let base = min(maximum, initial * Double(1 << min(failures, 30)))
        failures += 1
        guard jitter > 0 else { return base }
        return base * Double.random(in: (1 - jitter)...(1 + jitter), using: &generator)
    }

    /// The delay before the next attempt, with the system's random numbers.
    public mutating func nextDelay() -> Double {
        var generator = SystemRandomNumberGenerator()
        return nextDelay(using: &generator)
    }

    /// Failures since the last ``reset()``.
    public var consecutiveFailures: Int { failures }

    /// Forgets the failures: the next delay is `initial` again.
    public mutating func reset() { failures = 0 }
}
