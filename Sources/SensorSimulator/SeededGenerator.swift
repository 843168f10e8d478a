/// A seedable pseudo-random generator (SplitMix64). The same seed gives the same sequence on
/// every machine and every Swift release, which the system generator cannot promise. Not for
/// cryptography.
public struct SeededGenerator: RandomNumberGenerator, Sendable {
    private var state: UInt64

    /// A generator whose whole sequence is fixed by `seed`; every seed, 0 included, is usable.
    public init(seed: UInt64) { state = seed }

    /// The next 64 random bits.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var bits = state
        bits = (bits ^ (bits >> 30)) &* 0xBF58_476D_1CE4_E5B9
        bits = (bits ^ (bits >> 27)) &* 0x94D0_49BB_1331_11EB
        return bits ^ (bits >> 31)
    }

    /// A uniform value in `0..<1` made of 53 random bits. Unlike `Double.random(in:using:)`,
    /// whose algorithm the standard library may change, this is fixed here.
    public mutating func nextUnit() -> Double {
        Double(next() >> 11) * 0x1p-53
    }

    /// An approximately standard normal value: the sum of twelve uniform values less six. Its
    /// mean is 0 and its deviation 1, and it never goes beyond ±6, so noise built on it stays
    /// bounded and needs no logarithms.
    public mutating func nextNormal() -> Double {
        var sum = -6.0
        for _ in 0..<12 { sum += nextUnit() }
        return sum
    }

    /// A generator for a separate stream of choices, seeded from this one.
    mutating func split() -> SeededGenerator {
        SeededGenerator(seed: next())
    }
}
