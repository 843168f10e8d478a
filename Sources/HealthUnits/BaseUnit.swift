/// A unit symbol of the grammar before any prefix, with what it measures and its size.
///
/// Sizes are relative to the coherent base units count, s, kg and m, written as
/// `mantissa × 10^powerOfTen` with an integral mantissa, so that prefixes and most
/// conversions stay exact in binary floating point.
enum BaseUnit: CaseIterable, Sendable {
    case count, second, minute, hour, day
    case gram, meter, liter
    case joule, calorie, kilocalorie, largeCalorie
    case percent, millimeterOfMercury
    /// The volt (electrocardiogram voltages, in µV).
    case volt
    /// Standard gravity, 9.80665 m/s² (accelerometers' milli-g).
    case standardGravity

    /// The symbol as written in unit strings.
    var symbol: String {
        switch self {
        case .count: "count"
        case .second: "s"
        case .minute: "min"
        case .hour: "hr"
        case .day: "d"
        case .gram: "g"
        case .meter: "m"
        case .liter: "L"
        case .joule: "J"
        case .calorie: "cal"
        case .kilocalorie: "kcal"
        case .largeCalorie: "Cal"
        case .percent: "%"
        case .millimeterOfMercury: "mmHg"
        case .volt: "V"
        case .standardGravity: "G"
        }
    }

    /// Whether SI prefixes may precede the symbol.
    var acceptsPrefixes: Bool {
        switch self {
        case .second, .gram, .meter, .liter, .joule, .calorie, .volt, .standardGravity: true
        default: false
        }
    }

    /// What the unit measures.
    var dimension: Dimension {
        switch self {
        case .count: .count
        case .second, .minute, .hour, .day: .time
        case .gram: .mass
        case .meter: .length
        case .liter: Dimension(lengthExponent: 3)
        case .joule, .calorie, .kilocalorie, .largeCalorie: .energy
        case .percent: .scalar
        case .millimeterOfMercury: Dimension(timeExponent: -2, massExponent: 1, lengthExponent: -1)
        case .volt: .voltage
        case .standardGravity: .acceleration
        }
    }

    /// The integral part of the size in base units.
    var mantissa: Double {
        switch self {
        case .count, .second, .gram, .meter, .liter, .joule, .percent, .volt: 1
        case .minute: 60
        case .hour: 3600
        case .day: 86400
        case .calorie, .kilocalorie, .largeCalorie: 4184
        case .millimeterOfMercury: 133_322_387_415
        case .standardGravity: 980_665
        }
    }

    /// The power of ten completing the size: gram is 10⁻³ kg, litre 10⁻³ m³, calorie
    /// 4184 × 10⁻³ J, percent 10⁻², mmHg 133322387415 × 10⁻⁹ Pa, standard gravity
    /// 980665 × 10⁻⁵ m/s².
    var powerOfTen: Int {
        switch self {
        case .gram, .liter, .calorie: -3
        case .percent: -2
        case .millimeterOfMercury: -9
        case .standardGravity: -5
        default: 0
        }
    }

    /// The base unit written exactly as `symbol` (case-sensitive), if any.
    init?(symbol: Substring.UnicodeScalarView) {
        guard let match = BaseUnit.allCases.first(where: { $0.symbol.unicodeScalars.elementsEqual(symbol) }) else {
            return nil
        }
        self = match
    }
}
