/// One symbol of a unit string: a base unit with an optional SI prefix, such as `kJ` or `min`.
struct UnitAtom: Hashable, Sendable {
    /// The prefix, if any.
    let prefix: UnitPrefix?
    /// The unit being prefixed.
    let base: BaseUnit

    /// The atom for `base` with an optional `prefix`.
    init(_ base: BaseUnit, prefix: UnitPrefix? = nil) {
        self.base = base
        self.prefix = prefix
    }

    /// The atom a symbol names, or `nil`. Whole symbols win over prefixed readings, so
    /// `kcal`, `min`, `d` and `mmHg` are the base units of those names.
    init?(symbol: String) {
        let scalars = Substring(symbol).unicodeScalars
        if let base = BaseUnit(symbol: scalars) {
            self.init(base)
            return
        }
        for prefix in UnitPrefix.allCases {
            for spelling in prefix.spellings where scalars.starts(with: spelling.unicodeScalars) {
                let rest = scalars.dropFirst(spelling.unicodeScalars.count)
                if let base = BaseUnit(symbol: rest), base.acceptsPrefixes {
                    self.init(base, prefix: prefix)
                    return
                }
            }
        }
        return nil
    }

    /// The canonical spelling, e.g. `mcs` for a microsecond however it was written.
    var symbol: String { (prefix?.symbol ?? "") + base.symbol }

    /// What the atom measures.
    var dimension: Dimension { base.dimension }

    /// The integral part of the atom's size in base units.
    var mantissa: Double { base.mantissa }

    /// The power of ten of the atom's size, prefix included.
    var powerOfTen: Int { base.powerOfTen + (prefix?.powerOfTen ?? 0) }
}
