import HealthUnits
import Testing

@Suite("Quantities")
struct QuantityTests {
    @Test("A quantity reads back in compatible units")
    func readBack() throws {
        let heartRate = Quantity(unit: .countPerMinute, doubleValue: 72)
        #expect(heartRate.unit == .countPerMinute)
        #expect(try heartRate.doubleValue(for: .countPerMinute) == 72)
        #expect(isClose(try heartRate.doubleValue(for: HealthUnit(from: "count/s")), 1.2))
        #expect(isClose(try heartRate.doubleValue(for: HealthUnit(from: "count/hr")), 4320))
        let energy = Quantity(unit: .kilocalorie, doubleValue: 1)
        #expect(isClose(try energy.doubleValue(for: .kilojoule), 4.184))
    }

    @Test("Reading in an incompatible unit throws .incompatible")
    func incompatible() {
        let heartRate = Quantity(unit: .countPerMinute, doubleValue: 72)
        #expect(!heartRate.isCompatible(with: .kilogram))
        #expect(heartRate.isCompatible(with: .count.divided(by: .second)))
        #expect(throws: UnitError.incompatible(from: .countPerMinute, to: .kilogram)) {
            try heartRate.doubleValue(for: .kilogram)
        }
    }

    @Test("Conversion keeps the amount")
    func converted() throws {
        let interval = try Quantity(unit: .second, doubleValue: 0.8).converted(to: .millisecond)
        #expect(interval.unit == .millisecond)
        #expect(isClose(try interval.doubleValue(for: .millisecond), 800))
    }

    @Test("Equality is of unit and number; compare works across units")
    func comparison() throws {
        let oneSecond = Quantity(unit: .second, doubleValue: 1)
        let thousandMs = Quantity(unit: .millisecond, doubleValue: 1000)
        #expect(oneSecond != thousandMs)
        #expect(try oneSecond.compare(thousandMs) == .same)
        #expect(try Quantity(unit: .kilocalorie, doubleValue: 1).compare(Quantity(unit: .joule, doubleValue: 4184)) == .same)
        let slow = Quantity(unit: .countPerMinute, doubleValue: 60)
        let fast = Quantity(unit: try HealthUnit(from: "count/s"), doubleValue: 1.5)
        #expect(try slow.compare(fast) == .ascending)
        #expect(try fast.compare(slow) == .descending)
        #expect(try Quantity(unit: .second, doubleValue: .nan).compare(oneSecond) == .unordered)
        #expect(throws: UnitError.incompatible(from: .second, to: .kilogram)) {
            try Quantity(unit: .kilogram, doubleValue: 1).compare(oneSecond)
        }
    }

    @Test("Descriptions show the number and the unit")
    func descriptions() throws {
        #expect(Quantity(unit: .countPerMinute, doubleValue: 72).description == "72 count/min")
        #expect(Quantity(unit: try HealthUnit(from: "count/s"), doubleValue: 1.2).description == "1.2 count/s")
        #expect(Quantity(unit: .percent, doubleValue: -5).description == "-5 %")
        #expect(Quantity(unit: .joule, doubleValue: 1e20).description == "1e+20 J")
    }
}
