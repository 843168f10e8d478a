import HealthUnits
import Testing

@Suite("Errors")
struct ErrorTests {
    @Test("Blank strings are .empty", arguments: ["", " ", "\t\n"])
    func empty(input: String) {
        #expect(parseError(input) == .empty)
    }

    @Test(
        "Unknown symbols are .unknownUnit naming the symbol",
        arguments: [
            ("furlong", "furlong"), ("kk", "kk"), ("kg*furlong", "furlong"), ("kCal", "kCal"),
            ("k", "k"), ("mc", "mc"), ("kcount", "kcount"), ("k%", "k%"), ("12", "12"), ("s2", "s2"),
            ("count/Hz", "Hz"), ("kmin", "kmin"), ("S", "S"),
        ]
    )
    func unknown(input: String, symbol: String) {
        #expect(parseError(input) == .unknownUnit(symbol))
    }

    @Test(
        "Grammar violations are .malformed with a reason",
        arguments: [
            ("count//min", "unexpected '/' at column 7"),
            ("kg^", "expected an exponent after '^' at end of input"),
            ("^2", "unexpected '^' at column 1"),
            ("count/", "expected a unit at end of input"),
            ("count/min)", "unexpected ')' at column 10"),
            ("count/min$", "unexpected '$' at column 10"),
            ("kg^2x", "unexpected 'x' at column 5"),
            ("s^1.5", "unexpected '.' at column 4"),
            ("s^-", "expected an exponent after '^' at end of input"),
            ("s^--1", "expected an exponent after '^' at column 4"),
            ("s^+1", "expected an exponent after '^' at column 3"),
            ("count min", "whitespace is not allowed inside a unit (column 6)"),
            ("count/ min", "whitespace is not allowed inside a unit (column 7)"),
            ("m/s/s", "a second '/' at column 4 is ambiguous"),
            ("(count", "missing ')' for '(' at column 1"),
            ("()", "unexpected ')' at column 2"),
            ("count*", "expected a unit at end of input"),
            ("*s", "unexpected '*' at column 1"),
            ("/s", "unexpected '/' at column 1"),
            ("s^1000", "exponent out of range"),
            ("s^99999999999999999999999", "exponent out of range"),
            ("(s^999)^2", "exponent out of range"),
            ("s^999*s", "exponent out of range"),
            ("count-min", "unexpected '-' at column 6"),
        ]
    )
    func malformed(input: String, reason: String) throws {
        let error = try #require(parseError(input))
        guard case .malformed(let text, let actualReason) = error else {
            Issue.record("expected .malformed for \(input.debugDescription), got \(error)")
            return
        }
        #expect(text == input)
        #expect(actualReason.contains(reason), "reason was \(actualReason.debugDescription)")
    }

    @Test("The malformed text is the trimmed input")
    func malformedTrims() {
        #expect(parseError("  count//min ") == .malformed("count//min", reason: "unexpected '/' at column 7"))
    }

    @Test("Deep nesting is refused, not recursed into")
    func deepNesting() throws {
        let deep = String(repeating: "(", count: 10_000) + "s" + String(repeating: ")", count: 10_000)
        let error = try #require(parseError(deep))
        guard case .malformed(_, let reason) = error else {
            Issue.record("expected .malformed, got \(error)")
            return
        }
        #expect(reason.contains("nested"))
        let allowed = String(repeating: "(", count: 32) + "s" + String(repeating: ")", count: 32)
        #expect(try HealthUnit(from: allowed) == .second)
    }

    @Test("Descriptions are single lines naming the problem")
    func descriptions() {
        #expect(UnitError.empty.description == "empty unit string")
        #expect(UnitError.unknownUnit("furlong").description == "unknown unit \"furlong\"")
        #expect(
            UnitError.incompatible(from: .countPerMinute, to: .kilogram).description
                == "cannot convert count/min to kg: incompatible dimensions"
        )
        #expect(
            parseError("count//min")?.description
                == "malformed unit \"count//min\": unexpected '/' at column 7"
        )
        let multiline = parseError("count\nmin")?.description ?? ""
        #expect(!multiline.isEmpty)
        #expect(!multiline.contains("\n"))
    }
}
