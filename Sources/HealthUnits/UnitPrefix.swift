/// The SI prefixes HealthKit's unit strings allow on `s`, `g`, `m`, `L`, `J` and `cal`.
enum UnitPrefix: CaseIterable, Sendable {
    case pico, nano, micro, milli, centi, deci, deca, hecto, kilo, mega, giga

    /// How the prefix is written in canonical unit strings (`mc` for micro, as HealthKit).
    var symbol: String {
        switch self {
        case .pico: "p"
        case .nano: "n"
        case .micro: "mc"
        case .milli: "m"
        case .centi: "c"
        case .deci: "d"
        case .deca: "da"
        case .hecto: "h"
        case .kilo: "k"
        case .mega: "M"
        case .giga: "G"
        }
    }

    /// Every accepted spelling: the canonical one, plus the micro sign and Greek mu for micro.
    var spellings: [String] {
        switch self {
        case .micro: ["mc", "\u{00B5}", "\u{03BC}"]
        default: [symbol]
        }
    }

    /// The prefix's factor as a power of ten.
    var powerOfTen: Int {
        switch self {
        case .pico: -12
        case .nano: -9
        case .micro: -6
        case .milli: -3
        case .centi: -2
        case .deci: -1
        case .deca: 1
        case .hecto: 2
        case .kilo: 3
        case .mega: 6
        case .giga: 9
        }
    }
}
