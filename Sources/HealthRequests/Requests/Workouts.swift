import Foundation
import HealthModel
import Timestamps

/// The workout requests share how a caller names a time and which workout it means.
public enum WorkoutArguments {
    /// `at` on the wire: microseconds since the epoch; ``WireTime/noLowerBound`` is now.
    public static func time(_ at: Int64) throws(RequestFailure) -> Timestamp {
        guard at != WireTime.noLowerBound else { return .now() }
        do { try WireTime.check(at, "at") } catch { throw error.failure }
        return Timestamp(microsecondsSinceEpoch: at)
    }

    /// Refuses an application that may not write workouts; a manager always may.
    static func checkShare(_ source: String, in context: some RequestContext) async throws(RequestFailure) -> String? {
        if try await context.isManager() { return nil }
        let status = try await context.onStore { store throws(HealthStoreError) in try store.authorizationStatus(source: source, type: .workout) }
        guard status == .sharingAuthorized else { throw RequestFailure.store(.shareNotAuthorized(source: source, types: ["workout"])) }
        return source
    }

    /// The workout `id`, or without one the open workout of `person` (or of `device`), as
    /// `reader` sees it.
    static func resolve(id: String, person: String, device: String, reader: String?, in context: some RequestContext) async throws(RequestFailure)
        -> String
    {
        if !id.isEmpty { return id }
        guard !person.isEmpty || !device.isEmpty else { throw .invalidArguments("name a workout, or the person or device whose open workout it is") }
        let query = WorkoutQuery(person: person.isEmpty ? nil : person, device: device.isEmpty ? nil : device, openOnly: true, reader: reader, limit: 2)
        let open = try await context.onStore { store throws(HealthStoreError) in try store.workouts(query) }
        guard let workout = open.first else {
            throw .invalidArguments("\(person.isEmpty ? "the device \(device)" : person.debugDescription) has no open workout")
        }
        return workout.id
    }
}

/// What the requests that change one workout answer: the workout as it now is.
public struct WorkoutAnswer: Codable, Sendable {
    public var workout: Workout
}

/// Starts a workout as the caller's source: a person's, or a device's (the person it is
/// assigned to then, when anyone). Needs share authorization of `workout`, as a manager has.
public struct StartWorkout: HealthRequest {
    public static let name = "StartWorkout"
    public static let access = RequestAccess.application
    public static let memory: RequestMemory = .constant

    public var app: String
    /// "" when the workout is a device's.
    public var person: String
    /// "" when the workout is a person's.
    public var device: String
    public var activity: String
    /// ``WireTime/noLowerBound``: now.
    public var at: Int64

    public init(app: String, person: String?, device: String?, activity: WorkoutActivity, at: Timestamp?) {
        self.app = app
        self.person = person ?? ""
        self.device = device ?? ""
        self.activity = activity.rawValue
        self.at = at?.microsecondsSinceEpoch ?? WireTime.noLowerBound
    }

    public typealias Response = WorkoutAnswer

    public func serve(in context: some RequestContext) async throws(RequestFailure) -> Response {
        let source = try context.source(app: app)
        _ = try await WorkoutArguments.checkShare(source, in: context)
        let activity: WorkoutActivity
        do { activity = try WorkoutActivity.parse(self.activity) } catch { throw .invalidArguments(error.description) }
        let start = try WorkoutArguments.time(at)
        guard !person.isEmpty || !device.isEmpty else { throw .invalidArguments("a workout is a person's or a device's: name one") }
        if !person.isEmpty, let problem = Person.problem(withName: person) { throw .invalidArguments(problem) }
        let named = person.isEmpty ? nil : person
        let device = device.isEmpty ? nil : device
        let workout = try await context.onStore { store throws(HealthStoreError) -> Workout in
            var owner = named
            if owner == nil, let device { owner = try store.strapAssignments().person(wearing: device, at: start) }
            let workout = Workout(
                id: Workout.newID(), source: source, person: owner, device: device, activity: activity, start: start)
            try store.saveWorkout(workout)
            return workout
        }
        context.log(.notice, "started a workout", ["workout": workout.id, "activity": workout.activity.rawValue])
        return Response(workout: workout)
    }
}

/// Adds an event (pause, resume, lap, marker, segment-start, segment-end) to an open
/// workout of the caller's source (any workout for a manager): the one named, or the open
/// workout of a person or device.
public struct AddWorkoutEvent: HealthRequest {
    public static let name = "AddWorkoutEvent"
    public static let access = RequestAccess.application
    public static let memory: RequestMemory = .answer(Workout.eventLimit, of: "event")

    public var app: String
    public var id: String
    public var person: String
    public var device: String
    public var type: String
    public var at: Int64

    public init(app: String, id: String?, person: String?, device: String?, type: WorkoutEventType, at: Timestamp?) {
        self.app = app
        self.id = id ?? ""
        self.person = person ?? ""
        self.device = device ?? ""
        self.type = type.rawValue
        self.at = at?.microsecondsSinceEpoch ?? WireTime.noLowerBound
    }

    public typealias Response = WorkoutAnswer

    public func serve(in context: some RequestContext) async throws(RequestFailure) -> Response {
        let source = try context.source(app: app)
        let writer = try await WorkoutArguments.checkShare(source, in: context)
        guard let type = WorkoutEventType(rawValue: type) else {
            throw .invalidArguments("unknown workout event \(type.quoted) (known: \(WorkoutEventType.allCases.map(\.rawValue).joined(separator: ", ")))")
        }
        let event = WorkoutEvent(type, at: try WorkoutArguments.time(at))
        let id = try await WorkoutArguments.resolve(id: id, person: person, device: device, reader: writer, in: context)
        let workout = try await context.onStore { store throws(HealthStoreError) in try store.addWorkoutEvent(event, to: id, writer: writer) }
        context.log(.info, "added a workout event", ["workout": id, "event": type.rawValue])
        return Response(workout: workout)
    }
}

/// Ends an open workout of the caller's source (any workout for a manager).
public struct EndWorkout: HealthRequest {
    public static let name = "EndWorkout"
    public static let access = RequestAccess.application
    public static let memory: RequestMemory = .answer(Workout.eventLimit, of: "event")

    public var app: String
    public var id: String
    public var person: String
    public var device: String
    public var at: Int64

    public init(app: String, id: String?, person: String?, device: String?, at: Timestamp?) {
        self.app = app
        self.id = id ?? ""
        self.person = person ?? ""
        self.device = device ?? ""
        self.at = at?.microsecondsSinceEpoch ?? WireTime.noLowerBound
    }

    public typealias Response = WorkoutAnswer

    public func serve(in context: some RequestContext) async throws(RequestFailure) -> Response {
        let source = try context.source(app: app)
        let writer = try await WorkoutArguments.checkShare(source, in: context)
        let end = try WorkoutArguments.time(at)
        let id = try await WorkoutArguments.resolve(id: id, person: person, device: device, reader: writer, in: context)
        let workout = try await context.onStore { store throws(HealthStoreError) in try store.endWorkout(id, at: end, writer: writer) }
        context.log(.notice, "ended a workout", ["workout": id])
        return Response(workout: workout)
    }
}

/// The workouts that overlap [since, until) that the caller may read (its own source's, and
/// with read authorization of `workout` every source's), newest first, of one person or
/// device when named.
public struct Workouts: HealthRequest {
    public static let name = "Workouts"
    public static let access = RequestAccess.application
    public static let memory: RequestMemory = .answer(WorkoutQuery.answerLimit, of: "workout")

    public var app: String
    public var since: Int64
    public var until: Int64
    public var person: String
    public var device: String
    /// 1…``WorkoutQuery/answerLimit``.
    public var limit: UInt32

    public init(app: String, since: Timestamp?, until: Timestamp?, person: String?, device: String?, limit: Int) {
        self.app = app
        self.since = WireTime.since(since)
        self.until = WireTime.until(until)
        self.person = person ?? ""
        self.device = device ?? ""
        self.limit = UInt32(clamping: limit)
    }

    public struct Response: Codable, Sendable {
        public var workouts: [Workout]

        public init(workouts: [Workout]) { self.workouts = workouts }
    }

    public func serve(in context: some RequestContext) async throws(RequestFailure) -> Response {
        let source = try context.source(app: app)
        let view = try await context.view(of: source)
        let range = try WireTime.checked(since: since, until: until)
        guard (1...UInt32(WorkoutQuery.answerLimit)).contains(limit) else {
            throw .invalidArguments("limit must be 1…\(WorkoutQuery.answerLimit), not \(limit)")
        }
        let query = WorkoutQuery(
            since: range.since, until: range.until, person: person.isEmpty ? nil : person, device: device.isEmpty ? nil : device,
            reader: view.reader, limit: Int(limit))
        return Response(workouts: try await context.onStore { store throws(HealthStoreError) in try store.workouts(query) })
    }
}

/// One workout the caller may read, with its figures: heart rate, zones (the person's own),
/// laps, recovery, energy and TRIMP, over the heart-rate samples the caller may read.
public struct WorkoutDetails: HealthRequest {
    public static let name = "WorkoutDetails"
    public static let access = RequestAccess.application
    public static let memory: RequestMemory = .perSeries

    public var app: String
    public var id: String

    public init(app: String, id: String) {
        self.app = app
        self.id = id
    }

    public struct Response: Codable, Sendable {
        public var workout: Workout
        public var summary: WorkoutSummary

        public init(workout: Workout, summary: WorkoutSummary) {
            self.workout = workout
            self.summary = summary
        }
    }

    public func serve(in context: some RequestContext) async throws(RequestFailure) -> Response {
        let source = try context.source(app: app)
        let view = try await context.view(of: source)
        let id = self.id
        let now = Timestamp.now()
        return try await context.onStore { store throws(HealthStoreError) -> Response in
            let read = try WorkoutSamples.read(id, in: store, reader: view.reader, now: now, keepingPoints: false)
            return Response(workout: read.workout, summary: read.summary)
        }
    }
}

/// One workout the caller may read, its figures, and its heart-rate samples from start to
/// end (as the caller may read them, oldest first): what a workout's files are written from.
public struct WorkoutHeartRate: HealthRequest {
    public static let name = "WorkoutHeartRate"
    public static let access = RequestAccess.application
    public static let memory: RequestMemory = .answer(WorkoutSamples.pointLimit, of: "point")

    public var app: String
    public var id: String

    public init(app: String, id: String) {
        self.app = app
        self.id = id
    }

    public struct Response: Codable, Sendable {
        public var workout: Workout
        public var summary: WorkoutSummary
        public var points: [WorkoutPoint]
        /// The RR intervals (ms) of the workout's straps from its start to its end, oldest first.
        public var rrIntervals: [WorkoutPoint]

        public init(workout: Workout, summary: WorkoutSummary, points: [WorkoutPoint], rrIntervals: [WorkoutPoint] = []) {
            self.workout = workout
            self.summary = summary
            self.points = points
            self.rrIntervals = rrIntervals
        }
    }

    public func serve(in context: some RequestContext) async throws(RequestFailure) -> Response {
        let source = try context.source(app: app)
        let view = try await context.view(of: source)
        let id = self.id
        let now = Timestamp.now()
        return try await context.onStore { store throws(HealthStoreError) -> Response in
            let read = try WorkoutSamples.read(id, in: store, reader: view.reader, now: now, keepingPoints: true)
            let beats = try WorkoutSamples.rrIntervals(of: read.workout, in: store, reader: view.reader, now: now)
            return Response(workout: read.workout, summary: read.summary, points: read.points, rrIntervals: beats)
        }
    }
}

/// The workouts the caller may read that were started, changed or deleted after an anchor
/// (0: from the beginning), at most `limit` changes, and the anchor to pass next: how an
/// application keeps a copy of the workouts in step (HKAnchoredObjectQuery). A changed
/// workout comes whole, as it is now. An application's anchors are opaque tokens.
public struct WorkoutChanges: HealthRequest {
    public static let name = "WorkoutChanges"
    public static let access = RequestAccess.application
    public static let memory: RequestMemory = .answer(WorkoutQuery.answerLimit, of: "workout")

    public var app: String
    public var anchor: UInt64
    /// 1…``WorkoutQuery/answerLimit``.
    public var limit: UInt32

    public init(app: String, anchor: UInt64, limit: Int) {
        self.app = app
        self.anchor = anchor
        self.limit = UInt32(clamping: limit)
    }

    public struct Response: Codable, Sendable {
        public var workouts: [Workout]
        public var deleted: [String]
        public var newAnchor: UInt64

        public init(workouts: [Workout], deleted: [String], newAnchor: UInt64) {
            self.workouts = workouts
            self.deleted = deleted
            self.newAnchor = newAnchor
        }
    }

    public func serve(in context: some RequestContext) async throws(RequestFailure) -> Response {
        let source = try context.source(app: app)
        guard (1...UInt32(WorkoutQuery.answerLimit)).contains(limit) else {
            throw .invalidArguments("limit must be 1…\(WorkoutQuery.answerLimit), not \(limit)")
        }
        let view = try await context.view(of: source)
        let plain = try view.plainAnchor(anchor)
        let limit = Int(self.limit)
        let changes = try await context.onStore { store throws(HealthStoreError) in
            try store.workoutChanges(since: plain, limit: limit, reader: view.reader)
        }
        return Response(
            workouts: changes.workouts, deleted: changes.deleted, newAnchor: changes.anchor == plain ? anchor : view.anchor(changes.anchor))
    }
}

/// Deletes a workout of the caller's source (any workout for a manager); its samples stay.
public struct DeleteWorkout: HealthRequest {
    public static let name = "DeleteWorkout"
    public static let access = RequestAccess.application
    public static let memory: RequestMemory = .constant

    public var app: String
    public var id: String

    public init(app: String, id: String) {
        self.app = app
        self.id = id
    }

    public func serve(in context: some RequestContext) async throws(RequestFailure) -> NoResponse {
        let source = try context.source(app: app)
        let writer = try await WorkoutArguments.checkShare(source, in: context)
        let id = self.id
        try await context.onStore { store throws(HealthStoreError) in try store.deleteWorkout(id, writer: writer) }
        context.log(.notice, "deleted a workout", ["workout": id])
        return NoResponse()
    }
}

/// Which heart-rate samples a workout holds: those of its person's straps, each over its
/// assignment, or of its device, from its start to a minute and a few seconds past its end
/// (for the recovery).
public enum WorkoutSamples {
    /// The most samples one workout's answer carries (over two days at one a second).
    public static let pointLimit = 200_000

    /// The workout `id` as `reader` may see it, its figures over the heart-rate samples
    /// `reader` may read, and (`keepingPoints`) those from its start to its end, oldest first.
    public static func read(_ id: String, in store: any RequestStore, reader: String?, now: Timestamp, keepingPoints: Bool)
        throws(HealthStoreError) -> (workout: Workout, summary: WorkoutSummary, points: [WorkoutPoint])
    {
        guard let workout = try store.workout(id, reader: reader) else { throw .conflict("no workout \(id.debugDescription)") }
        var person: Person?
        if let name = workout.person { person = try store.people().first { $0.name == name } }
        var builder = WorkoutSummary.Builder(
            workout: workout, physiology: WorkoutPhysiology(person: person, year: Person.year(of: workout.start)), now: now)
        let end = workout.effectiveEnd(now: now)
        var points: [WorkoutPoint] = []
        var read = 0
        for query in try queries(for: workout, in: store, now: now, reader: reader) {
            try store.enumerateSamples(query) { stored in
                read += 1
                guard read <= HeartAnalysisBudget.samples else {
                    throw HealthStoreError.limitReached("a workout's figures read at most \(HeartAnalysisBudget.samples) samples")
                }
                let sample = stored.sample
                builder.add(sample.canonicalValue, at: sample.start.secondsSinceEpoch, device: sample.device?.localIdentifier ?? "")
                guard keepingPoints, sample.start <= end else { return }
                guard points.count < pointLimit else {
                    throw HealthStoreError.limitReached("the workout holds more than \(pointLimit) heart-rate samples, the most one answer carries")
                }
                points.append(WorkoutPoint(time: sample.start, value: sample.canonicalValue))
            }
        }
        points.sort { $0.time < $1.time }
        return (workout, builder.summary(), points)
    }

    /// The RR intervals `reader` may read of the workout's straps (as ``queries`` finds them)
    /// from its start to its end, oldest first, as (time, ms); at most ``pointLimit``.
    public static func rrIntervals(of workout: Workout, in store: any RequestStore, reader: String?, now: Timestamp) throws(HealthStoreError)
        -> [WorkoutPoint]
    {
        let end = workout.effectiveEnd(now: now)
        var beats: [WorkoutPoint] = []
        for query in try queries(for: workout, in: store, now: now, reader: reader, type: .rrInterval) {
            try store.enumerateSamples(query) { stored in
                guard stored.sample.start < end else { return }
                guard beats.count < pointLimit else {
                    throw HealthStoreError.limitReached("the workout holds more than \(pointLimit) RR intervals, the most one answer carries")
                }
                beats.append(WorkoutPoint(time: stored.sample.start, value: stored.sample.canonicalValue))
            }
        }
        beats.sort { $0.time < $1.time }
        return beats
    }

    /// The queries of the samples of `type` (heart rate by default) a workout's figures read:
    /// the strap's, or each of the person's straps within its assignment, from the start to
    /// the end plus the recovery minute.
    public static func queries(
        for workout: Workout, in store: any RequestStore, now: Timestamp, reader: String?, type: SampleType = .heartRate
    ) throws(HealthStoreError) -> [SampleQuery] {
        let start = workout.start
        let end = workout.end.map { $0.advanced(bySeconds: 60 + WorkoutSummary.Builder.recoveryTolerance + 1) } ?? max(start, now)
        guard let person = workout.person else {
            return [SampleQuery(type: type, since: start, until: end, device: workout.device, reader: reader)]
        }
        return try store.strapAssignments().queries(of: type, person: person, since: start, until: end, reader: reader)
    }
}
