import HealthModel
import JSONLines
import Timestamps

/// Whose workouts a state topic tells of: a person's, or a strap's that is nobody's.
public enum WorkoutOwner: Sendable, Hashable {
    case person(String)
    case device(String)

    /// The owner of `workout`.
    public init(_ workout: Workout) {
        if let person = workout.person { self = .person(person) } else { self = .device(workout.device ?? "") }
    }
}

/// Where workout states go, and their Home Assistant entities: `PREFIX/GATEWAY/person/NAME/workout`
/// for a person (NAME one topic level, as device identifiers are made one), and
/// `PREFIX/GATEWAY/DEVICE/workout` for a strap that is nobody's. Each owner has the entities
/// Workout (the state: `active`, `paused`, `ended` or `none`, with the activity, start and
/// elapsed seconds as attributes) and Workout elapsed (seconds, a duration).
extension MQTTLayout {
    /// The state topic of `owner`'s workout.
    public func workoutTopic(_ owner: WorkoutOwner) -> String {
        switch owner {
        case .person(let name): "\(topicPrefix)/\(gateway)/person/\(Self.topicLevel(device: name))/workout"
        case .device(let device): "\(topicPrefix)/\(gateway)/\(Self.topicLevel(device: device))/workout"
        }
    }

    /// The owner's device in Home Assistant: a person's own (`hrmd_GATEWAY_person_NAME`), or
    /// the strap's.
    public func workoutOwnerID(_ owner: WorkoutOwner) -> String {
        switch owner {
        case .person(let name): "hrmd_\(gateway)_person_" + strapID(device: name).dropFirst("hrmd_\(gateway)_".count)
        case .device(let device): strapID(device: device)
        }
    }

    /// The two entities' discovery topics and documents of `owner`.
    public func workoutDiscoveryMessages(_ owner: WorkoutOwner) -> [(topic: String, document: String)] {
        let id = workoutOwnerID(owner)
        var device: [(String, JSONValue)] = [("identifiers", .array([.string(id)]))]
        if case .person(let name) = owner {
            device += [("name", .string(name)), ("model", .string("person")), ("via_device", .string(gatewayID))]
        }
        func document(_ object: String, _ name: String, _ members: [(String, JSONValue)]) -> (String, String) {
            let document: [(String, JSONValue)] =
                [
                    ("name", .string(name)), ("unique_id", .string("\(id)_\(object)")), ("state_topic", .string(workoutTopic(owner))),
                ] + members + [
                    ("availability_topic", .string(statusTopic)), ("payload_available", .string(Self.online)),
                    ("payload_not_available", .string(Self.offline)), ("device", .object(device)),
                    ("origin", origin),
                ]
            return ("\(discoveryPrefix)/sensor/\(id)/\(object)/config", JSONValue.object(document).serialized)
        }
        return [
            document("workout", "Workout", [
                ("value_template", .string("{{ value_json.state }}")), ("json_attributes_topic", .string(workoutTopic(owner))),
                ("icon", .string("mdi:run")),
            ]),
            document("workout_elapsed", "Workout elapsed", [
                ("value_template", .string("{{ value_json.elapsed }}")), ("device_class", .string("duration")),
                ("unit_of_measurement", .string("s")), ("state_class", .string("measurement")), ("icon", .string("mdi:timer-outline")),
            ]),
        ]
    }

    /// The state payload of `workout` at `now`: `{"state":…,"activity":…,"id":…,"start":…,"elapsed":…}`,
    /// with `"end"` once it ended; elapsed is whole seconds from start to end (or now).
    public static func workoutPayload(_ workout: Workout, now: Timestamp) -> String {
        let state = workout.end != nil ? "ended" : workout.isPaused ? "paused" : "active"
        var members: [(String, JSONValue)] = [
            ("state", .string(state)), ("activity", .string(workout.activity.rawValue)), ("id", .string(workout.id)),
            ("start", .string(RFC3339.string(from: workout.start))),
        ]
        if let end = workout.end { members.append(("end", .string(RFC3339.string(from: end)))) }
        let elapsed = max(0, workout.effectiveEnd(now: now).secondsSinceEpoch - workout.start.secondsSinceEpoch)
        members.append(("elapsed", .number(elapsed.rounded(.down))))
        return JSONValue.object(members).serialized
    }

    /// The payload when the owner's workout was deleted.
    public static let noWorkoutPayload = #"{"state":"none"}"#
}
