import HealthModel
import JSONLines
import Timestamps

/// A workout's JSON shape, the one every front writes (`hrmctl workout show --output json`):
/// what it is, its events, and with a summary its figures, overall and per lap. Times are
/// RFC 3339; figures are rounded to hundredths.
public enum WorkoutJSON {
    /// The workout alone (what `workout list` prints per line).
    public static func object(_ workout: Workout, now: Timestamp = .now()) -> JSONValue {
        .object(members(workout, now: now))
    }

    /// The workout with its figures.
    public static func object(_ workout: Workout, summary: WorkoutSummary, now: Timestamp = .now()) -> JSONValue {
        var members = members(workout, now: now)
        members.removeAll { $0.0 == "elapsedSeconds" }
        members.append(("elapsedSeconds", number(summary.elapsedSeconds)))
        members.append(("activeSeconds", number(summary.activeSeconds)))
        if let heartRate = summary.heartRate { members.append(("heartRate", figures(heartRate))) }
        if let zones = summary.zones { members.append(("zones", self.zones(zones))) }
        members.append((
            "laps",
            .array(summary.laps.map { lap in
                var members: [(String, JSONValue)] = [
                    ("start", .string(RFC3339.string(from: lap.start))), ("end", .string(RFC3339.string(from: lap.end))),
                    ("activeSeconds", number(lap.activeSeconds)),
                ]
                if let heartRate = lap.heartRate { members.append(("heartRate", figures(heartRate))) }
                if let zones = lap.zones { members.append(("zones", self.zones(zones))) }
                return .object(members)
            })
        ))
        if let recovery = summary.recoveryOneMinute { members.append(("recoveryOneMinute", number(recovery))) }
        if let energy = summary.energyKilocalories { members.append(("energyKilocalories", number(energy))) }
        members.append(("trimp", number(summary.trimp)))
        return .object(members)
    }

    /// The workout with its figures and `"samples"`: each heart-rate sample from start to end
    /// as `{"time":…,"value":…}` (count/min), oldest first (what `workout export --format json`
    /// writes).
    public static func object(_ workout: Workout, summary: WorkoutSummary, samples: [WorkoutPoint], now: Timestamp = .now()) -> JSONValue {
        guard case .object(var members) = object(workout, summary: summary, now: now) else { return .null }
        members.append((
            "samples", .array(samples.map { .object([("time", .string(RFC3339.string(from: $0.time))), ("value", .number($0.value))]) })
        ))
        return .object(members)
    }

    private static func members(_ workout: Workout, now: Timestamp) -> [(String, JSONValue)] {
        var members: [(String, JSONValue)] = [("id", .string(workout.id)), ("source", .string(workout.source))]
        if let person = workout.person { members.append(("person", .string(person))) }
        if let device = workout.device { members.append(("device", .string(device))) }
        members.append(("activity", .string(workout.activity.rawValue)))
        members.append(("start", .string(RFC3339.string(from: workout.start))))
        if let end = workout.end { members.append(("end", .string(RFC3339.string(from: end)))) }
        members.append((
            "events",
            .array(workout.events.map { .object([("type", .string($0.type.rawValue)), ("time", .string(RFC3339.string(from: $0.time)))]) })
        ))
        members.append(("elapsedSeconds", number(workout.effectiveEnd(now: now).secondsSinceEpoch - workout.start.secondsSinceEpoch)))
        return members
    }

    private static func figures(_ figures: WorkoutSummary.HeartRateFigures) -> JSONValue {
        .object([("average", number(figures.average)), ("minimum", number(figures.minimum)), ("maximum", number(figures.maximum))])
    }

    /// Zones as `{"zone","lower","upper","seconds"}`; the top zone has no `upper`.
    private static func zones(_ zones: [HeartRateZones.Zone]) -> JSONValue {
        .array(zones.map { zone in
            var members: [(String, JSONValue)] = [("zone", .number(Double(zone.number))), ("lower", number(zone.lower))]
            if zone.upper.isFinite { members.append(("upper", number(zone.upper))) }
            members.append(("seconds", number(zone.seconds)))
            return .object(members)
        })
    }

    private static func number(_ value: Double) -> JSONValue { .number((value * 100).rounded() / 100) }
}
