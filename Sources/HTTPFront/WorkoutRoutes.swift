import Foundation
import HealthModel
import HealthRequests
import Hummingbird
import JSONLines
import Timestamps

/// The routes of workouts, under `/api/v1/workouts`: each serves one workout request and
/// answers in the shape `hrmctl workout` prints ([WorkoutJSON]).
extension APIRoute {
    /// `/api/v1/events`: the events the token's source may read, in `hrmctl events`' shape.
    static let events: [APIRoute] = [
        APIRoute(.get, "events", parameters: ["since", "until", "type", "person", "device", "limit"], serves: Events.name) { _, query, caller, _ in
            var request = Events(
                app: caller.app, since: try query.time("since"), until: try query.time("until"), type: nil, person: query.string("person"),
                device: query.string("device"), limit: Int(try query.unsigned("limit") ?? 100))
            // The type as named: the request checks it.
            request.type = query.string("type") ?? ""
            let answer = try await serve(request, as: caller)
            return .object([("events", .array(answer.events.map(EventJSON.object)))])
        },
    ]

    static let workouts: [APIRoute] = [
        APIRoute(.get, "workouts", parameters: ["since", "until", "person", "device", "limit"], serves: Workouts.name) { _, query, caller, _ in
            let answer = try await serve(
                Workouts(
                    app: caller.app, since: try query.time("since"), until: try query.time("until"), person: query.string("person"),
                    device: query.string("device"), limit: Int(try query.unsigned("limit") ?? 100)),
                as: caller)
            let now = Timestamp.now()
            return .object([("workouts", .array(answer.workouts.map { WorkoutJSON.object($0, now: now) }))])
        },
        APIRoute(.get, "workouts/details", parameters: ["id"], serves: WorkoutDetails.name) { _, query, caller, _ in
            guard let id = query.string("id") else { throw RequestFailure.invalidArguments("name the workout: ?id=ID") }
            let answer = try await serve(WorkoutDetails(app: caller.app, id: id), as: caller)
            return WorkoutJSON.object(answer.workout, summary: answer.summary)
        },
        APIRoute(.get, "workouts/heart-rate", parameters: ["id"], serves: WorkoutHeartRate.name) { _, query, caller, _ in
            guard let id = query.string("id") else { throw RequestFailure.invalidArguments("name the workout: ?id=ID") }
            let answer = try await serve(WorkoutHeartRate(app: caller.app, id: id), as: caller)
            return WorkoutJSON.object(answer.workout, summary: answer.summary, samples: answer.points)
        },
        APIRoute(.get, "workouts/changes", parameters: ["anchor", "limit"], serves: WorkoutChanges.name) { _, query, caller, _ in
            let anchor = try query.anchor()
            let answer = try await serve(WorkoutChanges(app: caller.app, anchor: anchor, limit: Int(try query.unsigned("limit") ?? 100)), as: caller)
            let now = Timestamp.now()
            return .object([
                ("workouts", .array(answer.workouts.map { WorkoutJSON.object($0, now: now) })),
                ("deleted", .array(answer.deleted.map { .string($0) })), ("anchor", .string(String(answer.newAnchor))),
            ])
        },
        APIRoute(.post, "workouts/start", serves: StartWorkout.name) { request, query, caller, _ in
            let body = try await WorkoutAction.read(request)
            let activity: WorkoutActivity
            do { activity = try WorkoutActivity.parse(body.activity ?? WorkoutActivity.other.rawValue) } catch {
                throw RequestFailure.invalidArguments("\(error)")
            }
            let answer = try await serve(
                StartWorkout(app: caller.app, person: body.person, device: body.device, activity: activity, at: try body.time(now: query.now)),
                as: caller)
            return WorkoutJSON.object(answer.workout)
        },
        APIRoute(.post, "workouts/event", serves: AddWorkoutEvent.name) { request, query, caller, _ in
            let body = try await WorkoutAction.read(request)
            guard let name = body.type, let type = WorkoutEventType(rawValue: name) else {
                throw RequestFailure.invalidArguments(
                    "type must be one of \(WorkoutEventType.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            let answer = try await serve(
                AddWorkoutEvent(app: caller.app, id: body.id, person: body.person, device: body.device, type: type, at: try body.time(now: query.now)),
                as: caller)
            return WorkoutJSON.object(answer.workout)
        },
        APIRoute(.post, "workouts/end", serves: EndWorkout.name) { request, query, caller, _ in
            let body = try await WorkoutAction.read(request)
            let answer = try await serve(
                EndWorkout(app: caller.app, id: body.id, person: body.person, device: body.device, at: try body.time(now: query.now)), as: caller)
            return WorkoutJSON.object(answer.workout)
        },
        APIRoute(.delete, "events", parameters: ["id"], serves: DeleteEvent.name) { _, query, caller, _ in
            guard let id = query.string("id") else { throw RequestFailure.invalidArguments("name the event: ?id=ID") }
            _ = try await serve(DeleteEvent(app: caller.app, id: id), as: caller)
            return .object([("deleted", .string(id))])
        },
        APIRoute(.delete, "workouts", parameters: ["id"], serves: DeleteWorkout.name) { _, query, caller, _ in
            guard let id = query.string("id") else { throw RequestFailure.invalidArguments("name the workout: ?id=ID") }
            _ = try await serve(DeleteWorkout(app: caller.app, id: id), as: caller)
            return .object([("deleted", .string(id))])
        },
    ]
}

/// The body of the workout POSTs: which workout (`id`, or the open one of `person` or
/// `device`), for a start its `activity`, for an event its `type`, and `at` (RFC 3339 or an
/// age; default now). Other keys are ignored.
struct WorkoutAction: Decodable {
    var id: String?
    var person: String?
    var device: String?
    var activity: String?
    var type: String?
    var at: String?

    /// What the body says of the time, or now.
    func time(now: Timestamp) throws(RequestFailure) -> Timestamp? {
        guard let at else { return nil }
        guard let time = TimeExpression.parse(at, now: now) else { throw .invalidArguments("at must be \(TimeExpression.expected), not \(at.quoted)") }
        return time
    }

    static func read(_ request: Request) async throws -> WorkoutAction {
        let body = try await request.body.collect(upTo: HTTPSettings.maxBodyBytes)
        let action: WorkoutAction
        do {
            let decoder = JSONDecoder()
            action = try decoder.decode(WorkoutAction.self, from: Data(buffer: body))
        } catch {
            throw RequestFailure.invalidArguments(#"the body must be a JSON object such as {"person":"ann","activity":"running"}"#)
        }
        for text in [action.id, action.person, action.device, action.activity, action.type, action.at].compactMap({ $0 })
        where text.utf8.count > RequestBudgets.stringArgumentBytes {
            throw RequestFailure.invalidArguments("a value of the body is longer than \(RequestBudgets.stringArgumentBytes) bytes")
        }
        return action
    }
}
