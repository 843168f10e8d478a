import HealthUnits
import Testing

@Suite("Parsing and canonical strings")
struct ParsingTests {
    @Test(
        "Required unit strings print canonically",
        arguments: [
            ("count", "count"), ("s", "s"), ("ms", "ms"), ("min", "min"), ("hr", "hr"), ("d", "d"),
            ("count/min", "count/min"), ("count/s", "count/s"), ("count/hr", "count/hr"),
            ("J", "J"), ("kJ", "kJ"), ("kcal", "kcal"), ("%", "%"), ("mcs", "mcs"),
            ("kg*m^2/s^2", "kg*m^2/s^2"), ("m/s^2", "m/s^2"), ("s^-1", "s^-1"),
        ]
    )
    func requiredStrings(input: String, canonical: String) throws {
        #expect(try HealthUnit(from: input).unitString == canonical)
    }

    @Test(
        "Alternative spellings normalise",
        arguments: [
            ("\u{00B5}s", "mcs"), ("\u{03BC}g", "mcg"), ("  count/min \n", "count/min"),
            ("kg\u{00B7}m^2/s^2", "kg*m^2/s^2"), ("mL/(kg*min)", "mL/kg*min"), ("mL/kg*min", "mL/kg*min"),
            ("s^-1*count", "count/s"), ("count*s/s", "count"), ("(m/s)^2", "m^2/s^2"),
            ("1/s", "s^-1"), ("1", "1"), ("s^0", "1"), ("count^1", "count"), ("s*s", "s^2"),
            ("m^-1*s^-2", "m^-1*s^-2"), ("min/s", "min/s"), ("(count/min)^-1", "min/count"),
            ("kg/(m/s)", "kg*s/m"), ("((s))", "s"), ("s^-0", "1"),
        ]
    )
    func alternativeSpellings(input: String, canonical: String) throws {
        #expect(try HealthUnit(from: input).unitString == canonical)
    }

    @Test(
        "Every prefix reads on every prefixable unit",
        arguments: ["p", "n", "mc", "m", "c", "d", "da", "h", "k", "M", "G"]
    )
    func prefixes(prefix: String) throws {
        for base in ["s", "g", "m", "L", "J", "cal"] {
            #expect(try HealthUnit(from: prefix + base).unitString == prefix + base)
        }
    }

    @Test("Whole symbols win over prefixed readings")
    func wholeSymbols() throws {
        #expect(try HealthUnit(from: "kcal") == .kilocalorie)
        #expect(try HealthUnit(from: "min") == .minute)
        #expect(try HealthUnit(from: "d") == .day)
        #expect(try HealthUnit(from: "mmHg").unitString == "mmHg")
        #expect(try HealthUnit(from: "Cal").unitString == "Cal")
        #expect(try HealthUnit(from: "Cal") != .kilocalorie)
        #expect(try HealthUnit(from: "dam").dimension == .length)
    }

    @Test(
        "Parsed units measure the right dimension",
        arguments: [
            ("count", Dimension.count),
            ("ms", Dimension.time),
            ("count/min", Dimension(countExponent: 1, timeExponent: -1)),
            ("kJ", Dimension.energy),
            ("kcal", Dimension.energy),
            ("kg*m^2/s^2", Dimension.energy),
            ("m/s^2", Dimension(timeExponent: -2, lengthExponent: 1)),
            ("L", Dimension(lengthExponent: 3)),
            ("%", Dimension.scalar),
            ("1", Dimension.scalar),
            ("min/s", Dimension.scalar),
            ("mmHg", Dimension(timeExponent: -2, massExponent: 1, lengthExponent: -1)),
        ]
    )
    func dimensions(input: String, dimension: Dimension) throws {
        #expect(try HealthUnit(from: input).dimension == dimension)
    }

    @Test("Different spellings of one unit are equal and hash alike")
    func equality() throws {
        let micro = try HealthUnit(from: "mcs")
        let sign = try HealthUnit(from: "\u{00B5}s")
        #expect(micro == sign)
        #expect(Set([micro, sign]).count == 1)
        #expect(try HealthUnit(from: "s^-1*count") == HealthUnit(from: "count/s"))
        // Written order is kept, so these differ as values while measuring the same thing.
        let countMinutes = try HealthUnit(from: "count*min")
        let minuteCounts = try HealthUnit(from: "min*count")
        #expect(countMinutes != minuteCounts)
        #expect(countMinutes.isCompatible(with: minuteCounts))
    }
}
