/// An amount in a unit, as HealthKit's `HKQuantity`: read it back in any compatible unit.
///
/// Equality is of the stored unit and number (`1000 ms` is not `==` to `1 s`); use
/// `compare(_:)` to compare amounts across units.
public struct Quantity: Hashable, Sendable, CustomStringConvertible {
    /// The unit the amount was given in.
    public let unit: HealthUnit
    /// The number, in `unit`; read through `doubleValue(for:)` so the unit is always explicit.
    private let value: Double

    /// `doubleValue` of `unit`.
    public init(unit: HealthUnit, doubleValue: Double) {
        self.unit = unit
        self.value = doubleValue
    }

    /// The amount expressed in `unit`.
    ///
    /// - Throws: `UnitError.incompatible` when `unit` measures a different dimension.
    public func doubleValue(for unit: HealthUnit) throws(UnitError) -> Double {
        try self.unit.convert(value, to: unit)
    }

    /// Whether the amount can be expressed in `unit`.
    public func isCompatible(with unit: HealthUnit) -> Bool {
        self.unit.isCompatible(with: unit)
    }

    /// The same amount, stored in `unit`.
    ///
    /// - Throws: `UnitError.incompatible` when `unit` measures a different dimension.
    public func converted(to unit: HealthUnit) throws(UnitError) -> Quantity {
        Quantity(unit: unit, doubleValue: try doubleValue(for: unit))
    }

    /// How this amount orders against `other`, compared in this quantity's unit.
    ///
    /// - Throws: `UnitError.incompatible` when the units measure different dimensions.
    public func compare(_ other: Quantity) throws(UnitError) -> QuantityOrdering {
        let theirs = try other.doubleValue(for: unit)
        if value < theirs { return .ascending }
        if value > theirs { return .descending }
        if value == theirs { return .same }
        return .unordered
    }

    /// The number and the unit, e.g. `72 count/min` or `1.2 count/s`.
    public var description: String {
        let number: String
        if value.isFinite, value == value.rounded(), value.magnitude < 1e15 {
            number = String(Int64(value))
        } else {
            number = String(value)
        }
        return "\(number) \(unit)"
    }
}

/// How one quantity orders against another of a compatible unit.
public enum QuantityOrdering: Sendable, Hashable {
    /// The receiver is smaller.
    case ascending
    /// The two amounts are equal.
    case same
    /// The receiver is larger.
    case descending
    /// One of the amounts is NaN.
    case unordered
}

extension Quantity: Codable {
    private enum CodingKeys: String, CodingKey { case value, unit }

    /// A quantity travels as its value in its own unit and the unit's string (`{"value": 62, "unit": "count/min"}`).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let unitString = try container.decode(String.self, forKey: .unit)
        let unit: HealthUnit
        do { unit = try HealthUnit(from: unitString) } catch {
            throw DecodingError.dataCorruptedError(forKey: .unit, in: container, debugDescription: "\(error)")
        }
        self.init(unit: unit, doubleValue: try container.decode(Double.self, forKey: .value))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(value, forKey: .value)
        try container.encode(unit.unitString, forKey: .unit)
    }
}
