/// Why a unit string could not be read, or why a value could not be converted.
///
/// Every failure in this module is one of these values; nothing here traps on bad input.
/// Descriptions are always a single line: quoted input is escaped.
public enum UnitError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The unit string was empty, or held only whitespace.
    case empty
    /// The unit string (trimmed of surrounding whitespace) breaks the grammar; `reason` says
    /// what was expected and where, e.g. `unexpected '/' at column 7`. Columns count Unicode
    /// scalars from 1 in the trimmed string.
    case malformed(String, reason: String)
    /// A symbol in the unit string names no unit, or a prefix the unit does not take,
    /// e.g. `furlong`, `kk` or `kCal`. The associated value is the offending symbol alone.
    case unknownUnit(String)
    /// The two units measure different dimensions, so no value converts between them.
    case incompatible(from: HealthUnit, to: HealthUnit)

    /// One line naming the failure, e.g.
    /// `cannot convert count/min to kg: incompatible dimensions`.
    public var description: String {
        switch self {
        case .empty:
            "empty unit string"
        case .malformed(let text, let reason):
            "malformed unit \(text.debugDescription): \(reason)"
        case .unknownUnit(let symbol):
            "unknown unit \(symbol.debugDescription)"
        case .incompatible(let from, let to):
            "cannot convert \(from) to \(to): incompatible dimensions"
        }
    }
}
