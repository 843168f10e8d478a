/// What a unit measures: integer exponents over the base dimensions count, time, mass,
/// length and electric current. Energy, for example, is mass·length²·time⁻²; a dimensionless scalar (such as `%`)
/// has every exponent zero.
///
/// Two units convert into each other exactly when their dimensions are equal. Count is a
/// dimension of its own, as in HealthKit: `count/min` does not convert to `%` or to `s^-1`.
public struct Dimension: Hashable, Sendable, CustomStringConvertible {
    /// The exponent of count (events, beats, steps).
    public var countExponent: Int
    /// The exponent of time.
    public var timeExponent: Int
    /// The exponent of mass.
    public var massExponent: Int
    /// The exponent of length.
    public var lengthExponent: Int
    /// The exponent of electric current (volts for the electrocardiogram).
    public var currentExponent: Int

    /// A dimension with the given exponents; omitted exponents are zero.
    public init(countExponent: Int = 0, timeExponent: Int = 0, massExponent: Int = 0, lengthExponent: Int = 0, currentExponent: Int = 0) {
        self.countExponent = countExponent
        self.timeExponent = timeExponent
        self.massExponent = massExponent
        self.lengthExponent = lengthExponent
        self.currentExponent = currentExponent
    }

    /// No dimension at all: pure numbers, ratios and percentages.
    public static let scalar = Dimension()
    /// Counts of things.
    public static let count = Dimension(countExponent: 1)
    /// Durations.
    public static let time = Dimension(timeExponent: 1)
    /// Masses.
    public static let mass = Dimension(massExponent: 1)
    /// Lengths.
    public static let length = Dimension(lengthExponent: 1)
    /// Energies: mass·length²·time⁻².
    public static let energy = Dimension(timeExponent: -2, massExponent: 1, lengthExponent: 2)
    /// Electric potentials: mass·length²·time⁻³·current⁻¹.
    public static let voltage = Dimension(timeExponent: -3, massExponent: 1, lengthExponent: 2, currentExponent: -1)
    /// Accelerations: length·time⁻².
    public static let acceleration = Dimension(timeExponent: -2, lengthExponent: 1)

    /// Whether every exponent is zero.
    public var isScalar: Bool { self == .scalar }

    /// The exponents as text in the fixed order count, mass, length, time, current, e.g.
    /// `mass*length^2*time^-2`, or `dimensionless` for a scalar.
    public var description: String {
        let named = [
            ("count", countExponent), ("mass", massExponent),
            ("length", lengthExponent), ("time", timeExponent), ("current", currentExponent),
        ]
        let parts = named.filter { $0.1 != 0 }.map { name, exponent in
            exponent == 1 ? name : "\(name)^\(exponent)"
        }
        return parts.isEmpty ? "dimensionless" : parts.joined(separator: "*")
    }

    /// This dimension times `other` raised to `power`. Callers keep the exponents small
    /// (units bound their exponents), so this cannot overflow in practice.
    func adding(_ other: Dimension, times power: Int) -> Dimension {
        Dimension(
            countExponent: countExponent + other.countExponent * power,
            timeExponent: timeExponent + other.timeExponent * power,
            massExponent: massExponent + other.massExponent * power,
            lengthExponent: lengthExponent + other.lengthExponent * power,
            currentExponent: currentExponent + other.currentExponent * power
        )
    }
}
