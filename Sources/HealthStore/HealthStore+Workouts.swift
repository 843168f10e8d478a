import GRDB
import HealthModel
import Timestamps

/// Workouts (tables `workout`, its events packed in its row, and `deletedWorkout`). Each change to a workout
/// (its start, an event, its end) takes a new anchor from the store's one sequence; a
/// deletion leaves a tombstone at its anchor. Whoever `writer` names (a source; nil: a
/// manager) may change only its own workouts.
extension HealthStore {
    /// Stores a new open or whole workout (`workout.problem` must be nil). A person named must
    /// exist, and a person's (or a device's that is nobody's) workouts do not overlap: at most
    /// one is open, and it starts after the others end.
    public func saveWorkout(_ workout: Workout) throws(HealthStoreError) {
        if let problem = workout.problem { throw .conflict(problem) }
        try writeAnnouncing { db in
            if let overlapping = try Self.overlappingWorkout(workout, db) {
                throw HealthStoreError.conflict(Self.overlapProblem(workout, overlapping))
            }
            try Self.insert(workout, db)
            return ((), .changed(workout))
        }
    }

    /// Stores a whole workout read from a file, unless the store holds it already: one of the
    /// same source and owner, with the same activity, start, end and events, is the same
    /// workout (importing a file again stores nothing new). Any other overlap is refused.
    public func importWorkout(_ workout: Workout) throws(HealthStoreError) -> WorkoutImportOutcome {
        if let problem = workout.problem { throw .conflict(problem) }
        return try writeAnnouncing { db in
            guard let overlapping = try Self.overlappingWorkout(workout, db) else {
                try Self.insert(workout, db)
                return (.stored, .changed(workout))
            }
            let same =
                overlapping.source == workout.source && overlapping.activity == workout.activity && overlapping.start == workout.start
                && overlapping.end == workout.end && overlapping.events == workout.events
            guard same else { throw HealthStoreError.conflict(Self.overlapProblem(workout, overlapping)) }
            return (.unchanged(id: overlapping.id), nil)
        }
    }

    /// The person wearing `device` at `time` by their assignments, if anyone.
    public func personWearing(_ device: String, at time: Timestamp) throws(HealthStoreError) -> String? {
        try strapAssignments().person(wearing: device, at: time)
    }

    /// Adds `event` to the open workout `id` as `writer` (nil: a manager); returns the workout
    /// as it is now.
    @discardableResult
    public func addWorkoutEvent(_ event: WorkoutEvent, to id: String, writer: String?) throws(HealthStoreError) -> Workout {
        try changeWorkout(id, writer: writer) { workout, rowID, db in
            if let problem = workout.problem(adding: event) { throw HealthStoreError.conflict(problem) }
            workout.events.append(event)
            try db.execute(
                sql: "UPDATE workout SET events = ? WHERE id = ?", arguments: [WorkoutEventPacking.bytes(of: workout.events), rowID])
        }
    }

    /// Ends the open workout `id` at `time` as `writer` (nil: a manager); a workout paused at
    /// its end counts as paused until then.
    @discardableResult
    public func endWorkout(_ id: String, at time: Timestamp, writer: String?) throws(HealthStoreError) -> Workout {
        try changeWorkout(id, writer: writer) { workout, rowID, db in
            if let problem = workout.problem(endingAt: time) { throw HealthStoreError.conflict(problem) }
            try db.execute(sql: #"UPDATE workout SET "end" = ? WHERE id = ?"#, arguments: [time.microsecondsSinceEpoch, rowID])
            workout.end = time
        }
    }

    /// Deletes workout `id` as `writer` (nil: a manager), leaving a tombstone.
    public func deleteWorkout(_ id: String, writer: String?) throws(HealthStoreError) {
        try writeAnnouncing { db in
            let (workout, rowID, sourceID) = try Self.loadForChange(id, writer: writer, db)
            var anchors = try AnchorSequence(db)
            anchors.last += 1
            try anchors.save(db)
            try db.execute(sql: "DELETE FROM workout WHERE id = ?", arguments: [rowID])
            try db.execute(
                sql: "INSERT INTO deletedWorkout (anchor, uuid, sourceId, deletedAt) VALUES (?, ?, ?, ?)",
                arguments: [anchors.last, id, sourceID, Timestamp.now().microsecondsSinceEpoch])
            return ((), .deleted(workout))
        }
    }

    /// The workouts `query` asks for that its reader may see, newest start first.
    public func workouts(_ query: WorkoutQuery) throws(HealthStoreError) -> [Workout] {
        try read { db in
            var conditions: [String] = []
            var arguments: StatementArguments = []
            if let since = query.since {
                conditions.append(#"("end" IS NULL OR "end" > ?)"#)
                arguments += [since.microsecondsSinceEpoch]
            }
            if let until = query.until {
                conditions.append("w.start < ?")
                arguments += [until.microsecondsSinceEpoch]
            }
            if let person = query.person {
                conditions.append("w.person = ?")
                arguments += [person]
            }
            if let device = query.device {
                conditions.append("w.device = ?")
                arguments += [device]
            }
            if query.openOnly { conditions.append(#"w."end" IS NULL"#) }
            if let reader = query.reader {
                conditions.append(Self.readableCondition)
                arguments += [reader, reader]
            }
            let filter = conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND ")
            let rows = try Row.fetchAll(
                db, sql: "\(Self.selectWorkouts) \(filter) ORDER BY w.start DESC, w.id DESC LIMIT ?",
                arguments: arguments + [max(0, min(query.limit, WorkoutQuery.answerLimit))])
            var workouts: [Workout] = []
            var events = 0
            for row in rows {
                let workout = try Self.workout(row, db)
                events += workout.events.count
                // The first workout always; then only while the answer keeps within its events.
                guard workouts.isEmpty || events <= WorkoutQuery.answerEventLimit else { break }
                workouts.append(workout)
            }
            return workouts
        }
    }

    /// The workout `id`, if `reader` (nil: a manager) may see it.
    public func workout(_ id: String, reader: String?) throws(HealthStoreError) -> Workout? {
        try read { db in try Self.fetchWorkout(id, reader: reader, db)?.workout }
    }

    /// The workouts `reader` may see (nil: every one) that were started, changed or deleted
    /// after `anchor`, at most `limit` changes, oldest change first.
    public func workoutChanges(since anchor: Int64, limit: Int, reader: String?) throws(HealthStoreError) -> WorkoutChangeSet {
        try workoutChanges(since: anchor, through: .max, limit: limit, reader: reader)
    }

    /// The workout changes after `anchor` up to anchor `last`, as `workoutChanges(since:limit:reader:)`
    /// gives them: a workout changed again after `last` is left for the change that did it.
    public func workoutChanges(since anchor: Int64, through last: Int64, limit: Int, reader: String?)
        throws(HealthStoreError) -> WorkoutChangeSet
    {
        try read { db in
            let visible = reader == nil ? "" : " AND " + Self.readableCondition
            let readerArguments: StatementArguments = reader.map { [$0, $0] } ?? []
            let changed = try Row.fetchAll(
                db,
                sql: """
                    SELECT w.anchor, w.uuid, 0 FROM workout w JOIN source s ON s.id = w.sourceId WHERE w.anchor > ? AND w.anchor <= ?\(visible)
                    UNION ALL
                    SELECT d.anchor, d.uuid, 1 FROM deletedWorkout d JOIN source s ON s.id = d.sourceId WHERE d.anchor > ? AND d.anchor <= ?\(visible)
                    ORDER BY 1 LIMIT ?
                    """,
                arguments: [anchor, last] + readerArguments + [anchor, last] + readerArguments + [max(0, limit)])
            var changes = WorkoutChangeSet(workouts: [], deleted: [], anchor: anchor)
            var events = 0
            for row in changed {
                let id: String = row[1]
                if row[2] as Bool {
                    changes.deleted.append(id)
                } else if let found = try Self.fetchWorkout(id, reader: nil, db) {
                    events += found.workout.events.count
                    // The first change always; then only while the answer keeps within its events.
                    guard changes.anchor == anchor || events <= WorkoutQuery.answerEventLimit else { break }
                    changes.workouts.append(found.workout)
                }
                changes.anchor = row[0]
            }
            return changes
        }
    }

    // MARK: Inside a transaction


    /// The columns ``workout(_:_:)`` reads, then the row's source id, over `workout w` joined
    /// with its `source s`.
    private static let selectWorkouts = """
        SELECT w.id, w.uuid, s.name, w.person, w.device, w.activity, w.start, w."end", w.sourceId, w.events
        FROM workout w JOIN source s ON s.id = w.sourceId
        """

    /// The workout `id` with its row and source ids, if `reader` (nil: a manager) may see it.
    private static func fetchWorkout(_ id: String, reader: String?, _ db: Database) throws
        -> (workout: Workout, rowID: Int64, sourceID: Int64)?
    {
        guard
            let row = try Row.fetchOne(
                db, sql: "\(selectWorkouts) WHERE w.uuid = ?\(reader == nil ? "" : " AND " + readableCondition)",
                arguments: reader.map { [id, $0, $0] } ?? [id])
        else { return nil }
        return (try workout(row, db), row[0], row[8])
    }

    /// What a reader may see: its own source's workouts, and every one with read
    /// authorization of `workout` (two arguments: the reader, twice).
    private static var readableCondition: String {
        """
        (s.name = ? OR EXISTS (SELECT 1 FROM authorization a JOIN source r ON r.id = a.sourceId
            WHERE r.name = ? AND a.typeId = \(SampleType.workout.storageID) AND a.readStatus = \(AuthorizationStatus.sharingAuthorized.rawValue)))
        """
    }

    private func changeWorkout(
        _ id: String, writer: String?, _ change: (inout Workout, Int64, Database) throws -> Void
    ) throws(HealthStoreError) -> Workout {
        try writeAnnouncing { db in
            var (workout, rowID, _) = try Self.loadForChange(id, writer: writer, db)
            try change(&workout, rowID, db)
            var anchors = try AnchorSequence(db)
            anchors.last += 1
            try anchors.save(db)
            try db.execute(sql: "UPDATE workout SET anchor = ? WHERE id = ?", arguments: [anchors.last, rowID])
            return (workout, .changed(workout))
        }
    }

    /// The workout `id` with its row and source ids, when `writer` may change it: a workout
    /// `writer` cannot read is one the store has not, and one it reads but did not write is
    /// refused.
    private static func loadForChange(_ id: String, writer: String?, _ db: Database) throws -> (Workout, Int64, Int64) {
        guard let found = try fetchWorkout(id, reader: writer, db) else { throw HealthStoreError.conflict("no workout \(id.debugDescription)") }
        if let writer, found.workout.source != writer {
            throw HealthStoreError.conflict("the workout \(id) is \(found.workout.source)'s; only its source changes it")
        }
        return (found.workout, found.rowID, found.sourceID)
    }

    private static func workout(_ row: Row, _ db: Database) throws -> Workout {
        Workout(
            id: row[1], source: row[2], person: row[3], device: row[4], activity: WorkoutActivity(rawValue: row[5]) ?? .other,
            start: Timestamp(microsecondsSinceEpoch: row[6]), end: (row[7] as Int64?).map(Timestamp.init(microsecondsSinceEpoch:)),
            events: try WorkoutEventPacking.events(of: row[9]))
    }

    /// A new workout's row and events, at a new anchor. Its person must exist, its id be new.
    private static func insert(_ workout: Workout, _ db: Database) throws {
        if let person = workout.person, try !(Bool.fetchOne(db, sql: "SELECT 1 FROM person WHERE name = ?", arguments: [person]) ?? false) {
            throw HealthStoreError.noPerson(named: person)
        }
        guard try Bool.fetchOne(db, sql: "SELECT 1 FROM workout WHERE uuid = ?", arguments: [workout.id]) != true else {
            throw HealthStoreError.conflict("a workout \(workout.id) exists")
        }
        let sourceID = try upsertSource(HealthSource(name: workout.source), db)
        var anchors = try AnchorSequence(db)
        anchors.last += 1
        try anchors.save(db)
        try db.execute(
            sql: """
                INSERT INTO workout (uuid, anchor, sourceId, person, device, activity, start, "end", events)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                """,
            arguments: [
                workout.id, anchors.last, sourceID, workout.person, workout.device, workout.activity.rawValue,
                workout.start.microsecondsSinceEpoch, workout.end?.microsecondsSinceEpoch, WorkoutEventPacking.bytes(of: workout.events),
            ])
    }

    /// A workout of the same person (or device that is nobody's) whose time overlaps
    /// `workout`'s (an open one lasts on), if any.
    private static func overlappingWorkout(_ workout: Workout, _ db: Database) throws -> Workout? {
        let owner = workout.person == nil ? "w.device = ? AND w.person IS NULL" : "w.person = ?"
        var arguments: StatementArguments = [workout.person ?? workout.device]
        var overlap = #"("end" IS NULL OR "end" > ?)"#
        arguments += [workout.start.microsecondsSinceEpoch]
        if let end = workout.end {
            overlap += " AND w.start < ?"
            arguments += [end.microsecondsSinceEpoch]
        }
        guard let row = try Row.fetchOne(db, sql: "\(selectWorkouts) WHERE \(owner) AND \(overlap) ORDER BY w.start LIMIT 1", arguments: arguments)
        else { return nil }
        return try self.workout(row, db)
    }

    private static func overlapProblem(_ workout: Workout, _ other: Workout) -> String {
        other.isOpen
            ? "\(owner(workout)) has an open workout already (\(other.id)); end it first"
            : "\(owner(workout)) has a workout from \(other.start) to \(other.end.map { "\($0)" } ?? "") (\(other.id)) that this one overlaps"
    }

    private static func owner(_ workout: Workout) -> String {
        workout.person.map { $0.debugDescription } ?? "the device \(workout.device ?? "")"
    }
}

extension ChangeCollector {
    /// A transaction that started or changed `workout` (now as given).
    static func changed(_ workout: Workout) -> ChangeCollector {
        var changes = ChangeCollector()
        changes.recordWorkout(workout)
        return changes
    }

    /// A transaction that deleted `workout`.
    static func deleted(_ workout: Workout) -> ChangeCollector {
        var changes = ChangeCollector()
        changes.recordDeletedWorkout(workout.id, source: workout.source)
        return changes
    }
}
