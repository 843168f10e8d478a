import HealthUnits
import Testing

@Suite("Round trips")
struct RoundTripTests {
    @Test(
        "init(from: unitString) gives back the same unit",
        arguments: [
            "count", "s", "ms", "min", "hr", "d", "count/min", "count/s", "count/hr", "J", "kJ", "kcal",
            "%", "mcs", "\u{00B5}s", "kg*m^2/s^2", "m/s^2", "s^-1", "1/s", "1", "mL/(kg*min)",
            "(count/min)^-1", "m^-1*s^-2", "s^-1*count", "mmHg", "Cal", "daL", "kg/(m/s)",
        ]
    )
    func roundTrip(input: String) throws {
        let parsed = try HealthUnit(from: input)
        let reparsed = try HealthUnit(from: parsed.unitString)
        #expect(reparsed == parsed)
        #expect(reparsed.unitString == parsed.unitString)
        #expect(parsed.description == parsed.unitString)
    }

    @Test(
        "Named units have their HealthKit spellings and read back",
        arguments: [
            (HealthUnit.count, "count"), (.second, "s"), (.millisecond, "ms"), (.minute, "min"),
            (.hour, "hr"), (.day, "d"), (.gram, "g"), (.kilogram, "kg"), (.meter, "m"),
            (.joule, "J"), (.kilojoule, "kJ"), (.kilocalorie, "kcal"), (.percent, "%"),
            (.countPerMinute, "count/min"), (.one, "1"),
        ]
    )
    func namedUnits(named: HealthUnit, spelling: String) throws {
        #expect(named.unitString == spelling)
        #expect(try HealthUnit(from: spelling) == named)
    }

    @Test("Units built by algebra round-trip too")
    func algebraRoundTrip() throws {
        let built = [
            HealthUnit.second.raised(toPower: -1),
            HealthUnit.count.divided(by: .second).divided(by: .kilogram),
            HealthUnit.one.divided(by: .meter).divided(by: .second.raised(toPower: 2)),
            HealthUnit.second.raised(toPower: Int.max),
        ]
        for unit in built {
            #expect(try HealthUnit(from: unit.unitString) == unit)
        }
    }
}
