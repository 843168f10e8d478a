import HealthModel
import Timestamps

/// What the desktop shows of an event (the freedesktop notification's summary, body and
/// urgency): one notification when it opens, replaced by one when it ends.
public struct EventNotification: Sendable, Equatable {
    /// The notification's title: what happened.
    public var summary: String
    /// Who, how much and since when.
    public var body: String
    /// 0 low, 1 normal, 2 critical (the specification's `urgency` hint).
    public var urgency: UInt8

    public init(summary: String, body: String, urgency: UInt8) {
        self.summary = summary
        self.body = body
        self.urgency = urgency
    }

    /// The notification of `event` as it is now: opened (no end) or ended. Heart-rate events
    /// that open are critical; the rest, and every end, normal.
    public init(_ event: HealthEvent) {
        let who = event.person ?? event.device ?? "a strap"
        let since = RFC3339.string(from: event.start, fractionDigits: 0)
        let ended = event.end != nil
        var details: [String] = []
        switch event.type {
        case .highHeartRateEvent:
            summary = ended ? "Heart rate back under \(Self.number(event.threshold)) count/min" : "High heart rate"
            if let extreme = event.extreme { details.append("up to \(Self.number(extreme)) count/min") }
            if !ended, let threshold = event.threshold { details.append("above \(Self.number(threshold))") }
        case .lowHeartRateEvent:
            summary = ended ? "Heart rate back over \(Self.number(event.threshold)) count/min" : "Low heart rate"
            if let extreme = event.extreme { details.append("down to \(Self.number(extreme)) count/min") }
            if !ended, let threshold = event.threshold { details.append("below \(Self.number(threshold))") }
        case .sensorContactLost:
            summary = ended ? "Strap back in contact" : "Strap lost skin contact"
        case .strapBatteryLow:
            summary = ended ? "Strap battery recovered" : "Strap battery low"
            if let extreme = event.extreme { details.append("\(Self.number(extreme)) %") }
        case .strapDisconnected:
            summary = ended ? "Strap connected again" : "Strap disconnected"
        default:
            summary = event.type.identifier
        }
        let span = ended ? "from \(since) for \(Self.duration(event))" : "since \(since)"
        body = ([who] + details + [span]).joined(separator: ", ")
        urgency = !ended && (event.type == .highHeartRateEvent || event.type == .lowHeartRateEvent) ? 2 : 1
    }

    private static func number(_ value: Double?) -> String {
        guard let value else { return "?" }
        return value == value.rounded() && abs(value) < 1e9 ? String(Int(value)) : String(value)
    }

    /// The event's length in whole minutes and seconds: `12 min 5 s`, `40 s`.
    private static func duration(_ event: HealthEvent) -> String {
        let seconds = max(0, (event.latest.microsecondsSinceEpoch - event.start.microsecondsSinceEpoch) / 1_000_000)
        return seconds >= 60 ? "\(seconds / 60) min \(seconds % 60) s" : "\(seconds) s"
    }
}
