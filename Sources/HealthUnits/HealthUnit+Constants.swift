extension HealthUnit {
    /// The dimensionless unit `1` (the empty product).
    public static let one = HealthUnit(factors: FactorList())
    /// Counts of things: `count`.
    public static let count = HealthUnit(.count)
    /// The second: `s`.
    public static let second = HealthUnit(.second)
    /// The millisecond: `ms`.
    public static let millisecond = HealthUnit(.second, prefix: .milli)
    /// The minute, 60 s: `min`.
    public static let minute = HealthUnit(.minute)
    /// The hour, 3600 s: `hr`.
    public static let hour = HealthUnit(.hour)
    /// The day, 86400 s: `d`.
    public static let day = HealthUnit(.day)
    /// The gram: `g`.
    public static let gram = HealthUnit(.gram)
    /// The kilogram: `kg`.
    public static let kilogram = HealthUnit(.gram, prefix: .kilo)
    /// The metre: `m`.
    public static let meter = HealthUnit(.meter)
    /// The joule, kg·m²/s²: `J`.
    public static let joule = HealthUnit(.joule)
    /// The kilojoule: `kJ`.
    public static let kilojoule = HealthUnit(.joule, prefix: .kilo)
    /// The kilocalorie, 4.184 kJ: `kcal`.
    public static let kilocalorie = HealthUnit(.kilocalorie)
    /// The percent, the scalar 0.01: `%`.
    public static let percent = HealthUnit(.percent)
    /// Beats or events per minute: `count/min`.
    public static let countPerMinute = HealthUnit.count.divided(by: .minute)
    /// Microvolts, an electrocardiogram's unit (HealthKit's `voltUnit(with: .micro)`).
    public static let microvolt = HealthUnit(.volt, prefix: .micro)
    /// Thousandths of standard gravity, an accelerometer's unit (`mG`).
    public static let milliG = HealthUnit(.standardGravity, prefix: .milli)
}
