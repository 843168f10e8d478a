
/// A point in time as users type it: RFC 3339 (`2026-11-20T10:00:00Z`) or an amount of time
/// ago (`90s`, `15m`, `2h`, `7d`; also `now`).
public enum TimeExpression {
    /// The time `text` names, relative ones counted back from `now`; nil when it names none.
    public static func parse(_ text: String, now: Timestamp) -> Timestamp? {
        if text == "now" { return now }
        if let absolute = RFC3339.parse(text) { return absolute }
        guard let seconds = seconds(in: text) else { return nil }
        return now.advanced(bySeconds: -seconds)
    }

    /// The seconds an amount of time (`90s`, `15m`, `2h`, `7d`, `4w`) names; nil when `text`
    /// names none, or more than 285,000 years (beyond what a Timestamp holds).
    public static func seconds(in text: String) -> Double? {
        guard let unit = text.last, let amount = Double(text.dropLast()), amount >= 0, amount.isFinite else { return nil }
        let seconds: Double
        switch unit {
        case "s": seconds = amount
        case "m": seconds = amount * 60
        case "h": seconds = amount * 3600
        case "d": seconds = amount * 86_400
        case "w": seconds = amount * 604_800
        default: return nil
        }
        return seconds <= 9e12 ? seconds : nil
    }

    /// What the error says a WHEN looks like.
    public static let expected = "an RFC 3339 time such as 2026-11-20T10:00:00Z or an age such as 90s, 15m, 2h, 7d"
}
