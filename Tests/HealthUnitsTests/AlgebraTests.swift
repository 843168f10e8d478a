import HealthUnits
import Testing

@Suite("Unit algebra")
struct AlgebraTests {
    @Test("count divided by minute is countPerMinute")
    func countPerMinute() throws {
        #expect(HealthUnit.count.divided(by: .minute) == .countPerMinute)
        #expect(try HealthUnit(from: "count/min") == .countPerMinute)
    }

    @Test("Products and quotients build compound units in written order")
    func compound() throws {
        let meter = HealthUnit.meter
        let joule = HealthUnit.kilogram.multiplied(by: meter.raised(toPower: 2)).divided(by: .second.raised(toPower: 2))
        #expect(joule.unitString == "kg*m^2/s^2")
        #expect(joule.isCompatible(with: .joule))
        #expect(try joule.convert(1, to: .joule) == 1)
        #expect(meter.divided(by: .second).divided(by: .second).unitString == "m/s^2")
    }

    @Test("Equal symbols merge and cancel; different symbols never cancel")
    func merging() throws {
        #expect(HealthUnit.count.multiplied(by: .count).unitString == "count^2")
        #expect(HealthUnit.count.divided(by: .count) == .one)
        #expect(HealthUnit.minute.divided(by: .second).unitString == "min/s")
        #expect(HealthUnit.minute.divided(by: .second).dimension.isScalar)
        #expect(HealthUnit.countPerMinute.multiplied(by: .minute) == .count)
    }

    @Test("Powers")
    func powers() {
        #expect(HealthUnit.second.raised(toPower: -1).unitString == "s^-1")
        #expect(HealthUnit.countPerMinute.raised(toPower: -1).unitString == "min/count")
        #expect(HealthUnit.countPerMinute.raised(toPower: 0) == .one)
        #expect(HealthUnit.countPerMinute.raised(toPower: 2).unitString == "count^2/min^2")
        #expect(HealthUnit.one.unitString == "1")
    }

    @Test("Exponents clamp instead of overflowing")
    func clamping() {
        let limit = HealthUnit.maximumExponent
        #expect(HealthUnit.second.raised(toPower: Int.max).unitString == "s^\(limit)")
        #expect(HealthUnit.second.raised(toPower: Int.min).unitString == "s^-\(limit)")
        let big = HealthUnit.second.raised(toPower: limit)
        #expect(big.multiplied(by: big).unitString == "s^\(limit)")
        #expect(big.dimension.timeExponent == limit)
    }

    @Test("Dimensions multiply with the units")
    func dimensions() {
        let speed = HealthUnit.meter.divided(by: .second)
        #expect(speed.dimension == Dimension(timeExponent: -1, lengthExponent: 1))
        #expect(HealthUnit.kilojoule.divided(by: .kilogram).dimension == Dimension(timeExponent: -2, lengthExponent: 2))
    }
}
