import HealthUnits
import Testing

@Suite("Compatibility")
struct CompatibilityTests {
    @Test(
        "Units of one dimension are compatible",
        arguments: [
            ("count/min", "count/s"), ("count/s", "count/hr"), ("count/min", "count/hr"),
            ("ms", "s"), ("d", "min"), ("kJ", "kcal"), ("kcal", "J"), ("J", "kg*m^2/s^2"),
            ("Cal", "kcal"), ("L", "m^3"), ("%", "1"), ("min/s", "%"), ("mmHg", "kg/m*s^2"),
        ]
    )
    func compatible(lhs: String, rhs: String) throws {
        let left = try HealthUnit(from: lhs)
        let right = try HealthUnit(from: rhs)
        #expect(left.isCompatible(with: right))
        #expect(right.isCompatible(with: left))
    }

    @Test(
        "Units of different dimensions are not",
        arguments: [
            ("count/min", "kg"), ("count/min", "s"), ("count/min", "%"), ("count/min", "s^-1"),
            ("count", "1"), ("kJ", "kg"), ("m", "L"), ("s", "ms^-1"),
        ]
    )
    func incompatible(lhs: String, rhs: String) throws {
        let left = try HealthUnit(from: lhs)
        let right = try HealthUnit(from: rhs)
        #expect(!left.isCompatible(with: right))
        #expect(!right.isCompatible(with: left))
    }
}
