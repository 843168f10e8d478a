import HeartRateEvents

/// The `[alerts]` section: when heart rate, sensor contact and battery become events (see
/// `EventDetector` and `BatteryWatch`). Without the section, `AlertRules.defaults`.
///
/// ```ini
/// [alerts]
/// high = 120                               (count/min: strictly above is high, 20…250)
/// high-for = 10m                           (how long before it is an event: 90, 30s, 10m, 1h; 1s…24h)
/// low = 40                                 (count/min: strictly below is low, 20…250, below high)
/// low-for = 10m
/// contact-lost-for = 30s
/// battery-low = 10                         (percent: under it opens an event, 1…99)
/// disconnected-for = 60s                   (a strap's link down this long is an event)
/// ```
extension AlertRules {
    /// The keys of `[alerts]`, in the order the documentation lists them.
    public static let configurationKeys = ["high", "high-for", "low", "low-for", "contact-lost-for", "battery-low", "disconnected-for"]

    /// Sets the rule `key` names from its value; each value is checked on its own here, how
    /// `high` and `low` go together by ``checkTogether(file:line:key:)``.
    mutating func set(_ key: String, _ value: String, invalid: (String) -> ConfigurationError) throws(ConfigurationError) {
        switch key {
        case "high":
            high = try Self.heartRate(value, invalid: invalid)
        case "low":
            low = try Self.heartRate(value, invalid: invalid)
        case "high-for":
            highFor = try Self.duration(value, invalid: invalid)
        case "low-for":
            lowFor = try Self.duration(value, invalid: invalid)
        case "contact-lost-for":
            contactLostFor = try Self.duration(value, invalid: invalid)
        case "disconnected-for":
            disconnectedFor = try Self.duration(value, invalid: invalid)
        case "battery-low":
            guard let percent = Int(value), Self.batteryLowRange.contains(percent) else {
                throw invalid("expected a whole percentage of \(Self.batteryLowRangeText)")
            }
            batteryLow = percent
        default:
            throw invalid("unknown key (known: \(Self.configurationKeys.joined(separator: ", ")))")
        }
    }

    /// Checks the section once read (`low` below `high`), naming `key` at `line`: the later of
    /// the two in the file.
    func checkTogether(file: String, line: Int, key: String) throws(ConfigurationError) {
        if let problem = problem() {
            throw .invalidLine(file: file, line: line, key: key, message: problem)
        }
    }

    private static func heartRate(_ value: String, invalid: (String) -> ConfigurationError) throws(ConfigurationError) -> Double {
        guard let bpm = Double(value), heartRateRange.contains(bpm) else { throw invalid("expected \(heartRateRangeText)") }
        return bpm
    }

    private static func duration(_ value: String, invalid: (String) -> ConfigurationError) throws(ConfigurationError) -> Duration {
        guard let duration = duration(parsing: value), durationRange.contains(duration) else {
            throw invalid("expected a duration of \(durationRangeText) such as 30s, 10m, 1h or 90 (seconds)")
        }
        return duration
    }
}
