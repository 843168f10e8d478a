import HealthUnits
import Testing

@Suite("Conversions")
struct ConversionTests {
    @Test(
        "Values convert by the ratio of unit sizes",
        arguments: [
            (72.0, "count/min", "count/s", 1.2),
            (72.0, "count/min", "count/hr", 4320.0),
            (1.2, "count/s", "count/min", 72.0),
            (4320.0, "count/hr", "count/min", 72.0),
            (1.0, "kcal", "kJ", 4.184),
            (4.184, "kJ", "kcal", 1.0),
            (1.0, "kcal", "J", 4184.0),
            (1.0, "cal", "J", 4.184),
            (1.0, "Cal", "kcal", 1.0),
            (1000.0, "ms", "s", 1.0),
            (1.0, "s", "ms", 1000.0),
            (1.0, "mcs", "ms", 0.001),
            (1.0, "d", "min", 1440.0),
            (1.0, "hr", "s", 3600.0),
            (50.0, "%", "1", 0.5),
            (1.0, "1", "%", 100.0),
            (1.0, "min/s", "1", 60.0),
            (1.0, "kg*m^2/s^2", "J", 1.0),
            (1.0, "kJ", "kg*m^2/s^2", 1000.0),
            (2.5, "kg", "g", 2500.0),
            (1.0, "L", "mL", 1000.0),
            (1.0, "mL", "cm^3", 1.0),
            (9.81, "m/s^2", "cm/ms^2", 9.81e-4),
            (1.0, "mmHg", "kg/m*s^2", 133.322387415),
            (120.0, "mmHg", "kg/m*s^2", 15998.6864898),
        ]
    )
    func conversion(value: Double, from: String, to: String, expected: Double) throws {
        let result = try HealthUnit(from: from).convert(value, to: HealthUnit(from: to))
        #expect(isClose(result, expected), "\(value) \(from) gave \(result) \(to), expected \(expected)")
    }

    @Test("Exact cases stay exact")
    func exactCases() throws {
        #expect(try HealthUnit.countPerMinute.convert(72, to: HealthUnit(from: "count/s")) == 1.2)
        #expect(try HealthUnit.millisecond.convert(1000, to: .second) == 1)
        #expect(try HealthUnit.kilocalorie.convert(1, to: .kilojoule) == 4.184)
        #expect(try HealthUnit.day.convert(1, to: .minute) == 1440)
        #expect(try HealthUnit.second.convert(0.5, to: .millisecond) == 500)
    }

    @Test("Converting there and back returns the value")
    func roundTrip() throws {
        let pairs: [(HealthUnit, HealthUnit)] = [
            (.countPerMinute, try HealthUnit(from: "count/hr")),
            (.kilocalorie, .kilojoule),
            (.millisecond, .hour),
        ]
        for (from, to) in pairs {
            let there = try from.convert(73.5, to: to)
            #expect(isClose(try to.convert(there, to: from), 73.5))
        }
    }

    @Test("Converting to the same unit returns the value unchanged, NaN included")
    func identity() throws {
        #expect(try HealthUnit.kilojoule.convert(3.25, to: .kilojoule) == 3.25)
        #expect(try HealthUnit.second.convert(.nan, to: .millisecond).isNaN)
    }

    @Test("Converting across dimensions throws .incompatible")
    func incompatible() throws {
        #expect(throws: UnitError.incompatible(from: .countPerMinute, to: .kilogram)) {
            try HealthUnit.countPerMinute.convert(72, to: .kilogram)
        }
        #expect(throws: UnitError.incompatible(from: .percent, to: .count)) {
            try HealthUnit.percent.convert(50, to: .count)
        }
    }
}
