/// A unit of measure, as HealthKit's `HKUnit`: a product of prefixed symbols raised to
/// integer powers, such as `count/min`, `kJ` or `kg*m^2/s^2`.
///
/// Units are values. Two units are equal when they have the same canonical `unitString`;
/// units that are not equal may still be compatible (`kJ` and `kcal`) and convert into each
/// other. Different symbols never cancel: `min/s` stays `min/s`, a scalar of size 60.
/// Exponents are limited to ±999; the grammar rejects larger ones and the algebra
/// (`multiplied(by:)`, `divided(by:)`, `raised(toPower:)`) clamps to that range.
public struct HealthUnit: Hashable, Sendable, CustomStringConvertible {
    /// The factors in canonical order.
    let factors: FactorList

    /// The largest exponent magnitude a factor of a unit may have.
    public static let maximumExponent = FactorList.exponentLimit

    init(factors: FactorList) {
        self.factors = factors
    }

    init(_ base: BaseUnit, prefix: UnitPrefix? = nil) {
        self.init(factors: FactorList(UnitAtom(base, prefix: prefix)))
    }

    /// The unit a HealthKit-style unit string names, e.g. `count/min`, `mcs`, `kg*m^2/s^2`,
    /// `mL/(kg*min)` or `s^-1`. Whitespace around the string is ignored; see `UnitGrammar`
    /// for the full grammar.
    ///
    /// - Throws: `UnitError.empty` for a blank string, `.unknownUnit` for a symbol that names
    ///   no unit, `.malformed` for anything else the grammar does not allow.
    public init(from string: String) throws(UnitError) {
        self.init(factors: try UnitGrammar.parse(string))
    }

    /// The canonical spelling, which `init(from:)` reads back to an equal unit.
    ///
    /// Factors with positive exponents come first, joined with `*`, then `/` and the
    /// factors with negative exponents joined with `*` (`kg*m^2/s^2`, `mL/kg*min`); each group
    /// keeps the order in which its symbols first appeared. A unit with only negative
    /// exponents prints them as such (`s^-1`), and the dimensionless unit prints as `1`.
    public var unitString: String {
        let numerator = factors.numerator
        let denominator = factors.denominator
        if numerator.isEmpty {
            return denominator.isEmpty ? "1" : Self.join(denominator, negated: false)
        }
        let top = Self.join(numerator, negated: false)
        return denominator.isEmpty ? top : top + "/" + Self.join(denominator, negated: true)
    }

    /// The canonical spelling; the same as `unitString`.
    public var description: String { unitString }

    /// What the unit measures, e.g. `count*time^-1` for `count/min`.
    public var dimension: Dimension { factors.dimension }

    /// Whether values in this unit convert to `other`, i.e. the dimensions are equal.
    public func isCompatible(with other: HealthUnit) -> Bool {
        dimension == other.dimension
    }

    /// `value`, measured in this unit, expressed in `other`: 72 count/min is 1.2 count/s.
    ///
    /// - Throws: `UnitError.incompatible` when the dimensions differ.
    public func convert(_ value: Double, to other: HealthUnit) throws(UnitError) -> Double {
        guard isCompatible(with: other) else { throw .incompatible(from: self, to: other) }
        guard self != other else { return value }
        return UnitScale.convert(value, from: UnitScale(factors), to: UnitScale(other.factors))
    }

    /// The product of the two units; equal symbols merge (`count` × `count` is `count^2`).
    public func multiplied(by other: HealthUnit) -> HealthUnit {
        HealthUnit(factors: factors.multiplied(by: other.factors).list)
    }

    /// The quotient of the two units; equal symbols cancel (`count*s` ÷ `s` is `count`).
    public func divided(by other: HealthUnit) -> HealthUnit {
        multiplied(by: other.raised(toPower: -1))
    }

    /// The unit to an integer power; the power 0 gives the dimensionless unit `1`.
    public func raised(toPower power: Int) -> HealthUnit {
        HealthUnit(factors: factors.raised(to: power).list)
    }

    private static func join(_ factors: [UnitFactor], negated: Bool) -> String {
        factors.map { factor in
            let exponent = negated ? -factor.exponent : factor.exponent
            return exponent == 1 ? factor.atom.symbol : "\(factor.atom.symbol)^\(exponent)"
        }.joined(separator: "*")
    }
}
