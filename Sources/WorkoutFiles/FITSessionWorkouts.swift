import FITDecoding
import HealthModel
import Timestamps

/// What a FIT activity file's session says a workout was: its activity (from the session's
/// sport), start, end and events (the timer's stops and restarts as pauses and resumes, each
/// lap's end before the session's as a lap). Whose it is, and who wrote it, the importer says.
public struct FITSessionWorkout: Sendable, Equatable {
    public var activity: WorkoutActivity
    public var start: Timestamp
    public var end: Timestamp
    public var events: [WorkoutEvent]

    /// The workout of `session`, one of `sessions`'. Timer events that do not change the
    /// timer's state (a stop while stopped) are left out, as are marks past the workout's
    /// event limit.
    public init(_ session: FITSessions.Session, of sessions: FITSessions) {
        activity = WorkoutActivity(fitSport: session.sport, subSport: session.subSport)
        start = Timestamp(microsecondsSinceEpoch: session.start * 1_000_000)
        end = Timestamp(microsecondsSinceEpoch: session.end * 1_000_000)
        var events: [WorkoutEvent] = []
        var paused = false
        for mark in sessions.marks(of: session) where events.count < Workout.eventLimit {
            let time = Timestamp(microsecondsSinceEpoch: mark.time * 1_000_000)
            switch mark {
            case .timerStop where !paused:
                paused = true
                events.append(WorkoutEvent(.pause, at: time))
            case .timerStart where paused:
                paused = false
                events.append(WorkoutEvent(.resume, at: time))
            case .lapEnd where events.last.map { $0.type != .lap || $0.time != time } ?? true:
                events.append(WorkoutEvent(.lap, at: time))
            default:
                break
            }
        }
        self.events = events
    }

    /// The workouts of every session of `sessions` the file keeps, in file order.
    public static func all(_ sessions: FITSessions) -> [FITSessionWorkout] {
        sessions.sessions.map { FITSessionWorkout($0, of: sessions) }
    }

    /// The workout, as `source` writes it, of `person` or `device`.
    public func workout(id: String, source: String, person: String?, device: String?) -> Workout {
        Workout(id: id, source: source, person: person, device: device, activity: activity, start: start, end: end, events: events)
    }
}

extension WorkoutActivity {
    /// The activity of FIT's `sport` and `sub_sport`: the one written as them, else the one
    /// of the sport alone, else `other`.
    public init(fitSport sport: UInt8, subSport: UInt8) {
        let exact = WorkoutActivity.allCases.first { FITSport($0) == FITSport(sport: sport, subSport: subSport) }
        self = exact ?? WorkoutActivity.allCases.first { FITSport($0).sport == sport && FITSport($0).subSport == 0 } ?? .other
    }
}
