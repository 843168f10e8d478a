/// The size of a unit relative to the coherent base units (count, s, kg, m), kept as
/// `numerator / denominator × 10^powerOfTen` so that SI prefixes never round.
struct UnitScale: Sendable {
    /// The product of the mantissas of factors with positive exponents.
    private var numerator = 1.0
    /// The product of the mantissas of factors with negative exponents.
    private var denominator = 1.0
    /// The summed powers of ten of all factors.
    private var powerOfTen = 0

    /// The size of the product of `factors`.
    init(_ factors: FactorList) {
        for factor in factors.factors {
            let power = Self.power(factor.atom.mantissa, factor.exponent.magnitude)
            if factor.exponent > 0 {
                numerator *= power
            } else {
                denominator *= power
            }
            powerOfTen += factor.atom.powerOfTen * factor.exponent
        }
    }

    /// `value` measured in a unit of size `from`, expressed in a unit of size `to`.
    static func convert(_ value: Double, from: UnitScale, to: UnitScale) -> Double {
        let scaled = value * from.numerator * to.denominator / (from.denominator * to.numerator)
        return shift(scaled, byPowerOfTen: from.powerOfTen - to.powerOfTen)
    }

    private static let exactPowersOfTen: [Double] = [
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
        1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
    ]

    /// `value × 10^exponent`, dividing for negative exponents so that e.g. 1000 × 10⁻³ is exactly 1.
    private static func shift(_ value: Double, byPowerOfTen exponent: Int) -> Double {
        let largest = exactPowersOfTen.count - 1
        var result = value
        var remaining = exponent.magnitude
        while remaining > 0 {
            let step = Int(min(remaining, UInt(largest)))
            result = exponent > 0 ? result * exactPowersOfTen[step] : result / exactPowersOfTen[step]
            remaining -= UInt(step)
        }
        return result
    }

    /// `base` to a nonnegative integral power, by repeated squaring.
    private static func power(_ base: Double, _ exponent: UInt) -> Double {
        var result = 1.0
        var square = base
        var remaining = exponent
        while remaining > 0 {
            if remaining & 1 == 1 { result *= square }
            square *= square
            remaining >>= 1
        }
        return result
    }
}
