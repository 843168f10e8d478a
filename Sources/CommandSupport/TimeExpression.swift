import Timestamps

/// A point in time as users type it: RFC 3339 (`2026-11-20T10:00:00Z`) or an amount of time
/// ago (`90s`, `15m`, `2h`, `7d`; also `now`).
public enum TimeExpression {
    /// The time `text` names, relative ones counted back from `now`; nil when it names none.
    public static func parse(_ text: String, now: Timestamp) -> Timestamp? {
        if text == "now" { return now }
        if let absolute = RFC3339.parse(text) { return absolute }
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
        // Beyond 285,000 years back, the time leaves what a Timestamp can hold.
        guard seconds <= 9e12 else { return nil }
        return now.advanced(bySeconds: -seconds)
    }

    /// What the error says a WHEN looks like.
    public static let expected = "an RFC 3339 time such as 2026-11-20T10:00:00Z or an age such as 90s, 15m, 2h, 7d"
}
