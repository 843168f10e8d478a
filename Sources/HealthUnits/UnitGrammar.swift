/// Reads HealthKit-style unit strings (`HKUnit(from:)`).
///
/// ```
/// unit        = expression                      (surrounding whitespace is trimmed)
/// expression  = term [ "/" term ]
/// term        = factor { ( "*" | "·" ) factor }
/// factor      = primary [ "^" [ "-" ] digits ]  (|exponent| ≤ 999)
/// primary     = symbol | "1" | "(" expression ")"
/// symbol      = [ prefix ] base                 (prefixes only on s, g, m, L, J, cal)
/// base        = "count" | "s" | "min" | "hr" | "d" | "g" | "m" | "L" | "J" | "cal"
///             | "kcal" | "Cal" | "%" | "mmHg"
/// prefix      = "p" | "n" | "mc" | "µ" | "m" | "c" | "d" | "da" | "h" | "k" | "M" | "G"
/// ```
///
/// As in HealthKit, everything after a `/` is in the denominator: `mL/kg*min` is
/// mL/(kg·min), the same unit as `mL/(kg*min)`. A second `/` at one nesting level is
/// ambiguous and rejected; parentheses group instead, and `^` applies to a whole group
/// (`(m/s)^2`). `1` is the dimensionless unit, so `1/s` reads as `s^-1`. No whitespace
/// is allowed inside a unit. Whole symbols win over prefixed readings (`kcal`, `min`,
/// `d`, `mmHg`).
enum UnitGrammar {
    /// The factors `text` names, in canonical order.
    static func parse(_ text: String) throws(UnitError) -> FactorList {
        let scalars = Array(text.unicodeScalars)
        var start = scalars.startIndex
        var end = scalars.endIndex
        while start < end, scalars[start].properties.isWhitespace { start += 1 }
        while end > start, scalars[end - 1].properties.isWhitespace { end -= 1 }
        guard start < end else { throw .empty }
        var parser = UnitParser(Array(scalars[start..<end]))
        return try parser.parseUnit()
    }
}

/// A recursive-descent parser over the trimmed scalars of one unit string.
struct UnitParser {
    /// Deeper parenthesis nesting than this is rejected rather than risking the stack.
    static let maximumNesting = 32

    private let scalars: [Unicode.Scalar]
    private var position = 0
    private var nesting = 0

    /// A parser for already trimmed, nonempty text.
    init(_ scalars: [Unicode.Scalar]) {
        self.scalars = scalars
    }

    /// The whole text as one unit; anything left over is an error.
    mutating func parseUnit() throws(UnitError) -> FactorList {
        let factors = try parseExpression()
        guard position == scalars.count else { throw unexpected() }
        return factors
    }

    private mutating func parseExpression() throws(UnitError) -> FactorList {
        let numerator = try parseTerm()
        guard current == "/" else { return numerator }
        position += 1
        let denominator = try parseTerm()
        if current == "/" {
            throw malformed("a second '/' at \(column) is ambiguous; group the denominator in parentheses")
        }
        return try checked(numerator.multiplied(by: denominator.raised(to: -1).list))
    }

    private mutating func parseTerm() throws(UnitError) -> FactorList {
        var product = try parseFactor()
        while current == "*" || current == "·" {
            position += 1
            let next = try parseFactor()
            product = try checked(product.multiplied(by: next))
        }
        return product
    }

    private mutating func parseFactor() throws(UnitError) -> FactorList {
        let primary = try parsePrimary()
        guard current == "^" else { return primary }
        position += 1
        let exponent = try parseExponent()
        return try checked(primary.raised(to: exponent))
    }

    private mutating func parsePrimary() throws(UnitError) -> FactorList {
        guard let scalar = current else {
            throw malformed("expected a unit at end of input")
        }
        if scalar == "(" {
            return try parseGroup()
        }
        guard Self.isSymbolScalar(scalar) else { throw unexpected() }
        var symbol = ""
        while let next = current, Self.isSymbolScalar(next) {
            symbol.unicodeScalars.append(next)
            position += 1
        }
        if symbol == "1" { return FactorList() }
        guard let atom = UnitAtom(symbol: symbol) else { throw .unknownUnit(symbol) }
        return FactorList(atom)
    }

    private mutating func parseGroup() throws(UnitError) -> FactorList {
        let opening = column
        guard nesting < Self.maximumNesting else {
            throw malformed("parentheses nested more than \(Self.maximumNesting) deep at \(opening)")
        }
        nesting += 1
        position += 1
        let inner = try parseExpression()
        guard current == ")" else {
            if current == nil { throw malformed("missing ')' for '(' at \(opening)") }
            throw unexpected()
        }
        position += 1
        nesting -= 1
        return inner
    }

    private mutating func parseExponent() throws(UnitError) -> Int {
        let negative = current == "-"
        if negative { position += 1 }
        guard current.flatMap(Self.digitValue) != nil else {
            if current == nil { throw malformed("expected an exponent after '^' at end of input") }
            throw malformed("expected an exponent after '^' at \(column)")
        }
        let start = column
        var magnitude = 0
        while let next = current, let digit = Self.digitValue(next) {
            magnitude = magnitude * 10 + digit
            guard magnitude <= FactorList.exponentLimit else {
                throw malformed("exponent out of range (at most \(FactorList.exponentLimit)) at \(start)")
            }
            position += 1
        }
        return negative ? -magnitude : magnitude
    }

    /// The factors of a combination, or an error when an exponent left ±999.
    private func checked(_ outcome: (list: FactorList, clamped: Bool)) throws(UnitError) -> FactorList {
        guard !outcome.clamped else {
            throw malformed("exponent out of range (at most \(FactorList.exponentLimit)) before \(column)")
        }
        return outcome.list
    }

    private var current: Unicode.Scalar? {
        position < scalars.count ? scalars[position] : nil
    }

    /// The current position for messages, e.g. `column 7` (1-based, in Unicode scalars).
    private var column: String { "column \(position + 1)" }

    private var text: String {
        var text = ""
        text.unicodeScalars.append(contentsOf: scalars)
        return text
    }

    private func malformed(_ reason: String) -> UnitError {
        .malformed(text, reason: reason)
    }

    /// The error for the scalar at the current position, which fits nowhere.
    private func unexpected() -> UnitError {
        guard let scalar = current else { return malformed("unexpected end of input") }
        if scalar.properties.isWhitespace {
            return malformed("whitespace is not allowed inside a unit (\(column))")
        }
        return malformed("unexpected '\(scalar.escaped(asASCII: false))' at \(column)")
    }

    /// Letters, digits and `%` make up symbols; operators and everything else end them.
    private static func isSymbolScalar(_ scalar: Unicode.Scalar) -> Bool {
        if scalar == "·" { return false }
        return scalar == "%" || digitValue(scalar) != nil || scalar.properties.isAlphabetic
    }

    private static func digitValue(_ scalar: Unicode.Scalar) -> Int? {
        guard ("0"..."9").contains(scalar) else { return nil }
        return Int(scalar.value - ("0" as Unicode.Scalar).value)
    }
}
