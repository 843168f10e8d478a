/// Capped exponential backoff with jitter: the first retry after `initial`, each following one
/// after twice the previous, never more than `maximum`; each delay is then spread by up to
/// ±`jitter` (a fraction) using the injected generator, so straps that dropped together do
/// not retry together.
public struct Backoff: Sendable, Hashable {
    public var initial: Duration
    public var maximum: Duration
    /// The fraction of each delay that is randomised (0.2 = ±20 %).
    public var jitter: Double

    public init(initial: Duration = .seconds(1), maximum: Duration = .seconds(60), jitter: Double = 0.2) {
        self.initial = initial
        self.maximum = maximum
        self.jitter = min(max(jitter, 0), 1)
    }

    /// The delay before retry number `attempt` (1 for the first retry). `unit` is a random
    /// number in 0..<1.
    public func delay(attempt: Int, unit: Double) -> Duration {
        let base = seconds(initial) * pow2(max(attempt, 1) - 1)
        let capped = min(base, seconds(maximum))
        let spread = capped * jitter * (2 * min(max(unit, 0), 1) - 1)
        return .milliseconds(Int64(max(0, capped + spread) * 1000))
    }

    private func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    private func pow2(_ exponent: Int) -> Double {
        exponent >= 62 ? Double.greatestFiniteMagnitude : Double(UInt64(1) << UInt64(exponent))
    }
}

/// Random numbers for jitter; injected so tests are deterministic.
public protocol JitterSource: Sendable {
    /// A number in 0..<1.
    func next() -> Double
}

/// The system's random generator.
public struct SystemJitter: JitterSource {
    public init() {}
    public func next() -> Double { Double.random(in: 0..<1) }
}
