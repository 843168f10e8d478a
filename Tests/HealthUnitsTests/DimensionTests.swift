import HealthUnits
import Testing

@Suite("Dimensions")
struct DimensionTests {
    @Test("Energy is mass times length squared over time squared")
    func energy() {
        let energy = Dimension.energy
        #expect(energy.massExponent == 1)
        #expect(energy.lengthExponent == 2)
        #expect(energy.timeExponent == -2)
        #expect(energy.countExponent == 0)
        #expect(!energy.isScalar)
        #expect(HealthUnit.kilocalorie.dimension == energy)
    }

    @Test("Scalars have every exponent zero")
    func scalar() {
        #expect(Dimension.scalar.isScalar)
        #expect(Dimension() == .scalar)
        #expect(HealthUnit.percent.dimension.isScalar)
        #expect(!HealthUnit.count.dimension.isScalar)
    }

    @Test("Descriptions list exponents in a fixed order")
    func descriptions() {
        #expect(Dimension.energy.description == "mass*length^2*time^-2")
        #expect(HealthUnit.countPerMinute.dimension.description == "count*time^-1")
        #expect(Dimension.scalar.description == "dimensionless")
    }
}
