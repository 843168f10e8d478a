/// One atom of a unit raised to a nonzero integer exponent, such as `s^-2`.
struct UnitFactor: Hashable, Sendable {
    /// The prefixed symbol.
    let atom: UnitAtom
    /// The power it is raised to; never zero inside a `FactorList`.
    var exponent: Int
}

/// The factors of a unit in canonical order: factors with positive exponents first, then
/// those with negative exponents, each group in order of first appearance. Each atom occurs
/// once (repeats are merged by adding exponents) and zero exponents are dropped, so two lists
/// are equal exactly when they print the same canonical string.
///
/// Exponents stay within ±`exponentLimit`. Operations report whether they had to clamp, so the
/// parser can reject such input while the non-throwing unit algebra simply saturates.
struct FactorList: Hashable, Sendable {
    /// The largest exponent magnitude a factor may have.
    static let exponentLimit = 999

    /// The factors, in canonical order.
    private(set) var factors: [UnitFactor]

    /// The empty product: the dimensionless unit `1`.
    init() { factors = [] }

    /// The single atom, to the first power.
    init(_ atom: UnitAtom) { factors = [UnitFactor(atom: atom, exponent: 1)] }

    private init(normalizing raw: [UnitFactor]) {
        let kept = raw.filter { $0.exponent != 0 }
        factors = kept.filter { $0.exponent > 0 } + kept.filter { $0.exponent < 0 }
    }

    /// The factors with positive exponents, in order.
    var numerator: [UnitFactor] { factors.filter { $0.exponent > 0 } }

    /// The factors with negative exponents, in order.
    var denominator: [UnitFactor] { factors.filter { $0.exponent < 0 } }

    /// What the product measures.
    var dimension: Dimension {
        factors.reduce(Dimension.scalar) { $0.adding($1.atom.dimension, times: $1.exponent) }
    }

    /// The product with `other`; `clamped` is true when an exponent had to be limited.
    func multiplied(by other: FactorList) -> (list: FactorList, clamped: Bool) {
        var raw = factors
        var clamped = false
        for factor in other.factors {
            if let index = raw.firstIndex(where: { $0.atom == factor.atom }) {
                let bounded = Self.bound(raw[index].exponent + factor.exponent)
                raw[index].exponent = bounded.value
                clamped = clamped || bounded.clamped
            } else {
                raw.append(factor)
            }
        }
        return (FactorList(normalizing: raw), clamped)
    }

    /// Every exponent times `power`; `clamped` is true when an exponent had to be limited.
    func raised(to power: Int) -> (list: FactorList, clamped: Bool) {
        // One past the limit still makes any nonzero exponent overflow, without risking Int overflow.
        let limitedPower = min(max(power, -Self.exponentLimit - 1), Self.exponentLimit + 1)
        var clamped = false
        let raw = factors.map { factor in
            let bounded = Self.bound(factor.exponent * limitedPower)
            clamped = clamped || bounded.clamped
            return UnitFactor(atom: factor.atom, exponent: bounded.value)
        }
        return (FactorList(normalizing: raw), clamped)
    }

    private static func bound(_ exponent: Int) -> (value: Int, clamped: Bool) {
        let value = min(max(exponent, -exponentLimit), exponentLimit)
        return (value, value != exponent)
    }
}
