import Foundation
import GRDB
import Testing
import Timestamps

import HealthModel
@testable import HealthStore

@Suite("Workouts: their rules, their figures and their storage")
struct WorkoutTests {
    private let start = Fixture.base

    private func at(_ seconds: Double) -> Timestamp { start.advanced(bySeconds: seconds) }

    private func workout(_ events: [WorkoutEvent] = [], end: Double? = nil, person: String? = "ann", source: String = "mary/coach") -> Workout {
        Workout(
            id: UUID().uuidString.lowercased(), source: source, person: person, device: person == nil ? "strap-1" : nil, activity: .running,
            start: start, end: end.map(at), events: events)
    }

    // MARK: The model's rules

    @Test("events come in time order and fit the workout's state")
    func eventRules() {
        var open = workout()
        #expect(open.problem(adding: WorkoutEvent(.resume, at: at(1))) == "the workout is not paused")
        #expect(open.problem(adding: WorkoutEvent(.lap, at: at(-1))) != nil, "before the start")
        #expect(open.problem(adding: WorkoutEvent(.segmentEnd, at: at(1))) == "no segment is open")
        open.events = [WorkoutEvent(.pause, at: at(10))]
        #expect(open.isPaused)
        #expect(open.problem(adding: WorkoutEvent(.pause, at: at(11))) == "the workout is paused already")
        #expect(open.problem(adding: WorkoutEvent(.resume, at: at(9))) != nil, "before the last event")
        #expect(open.problem(adding: WorkoutEvent(.resume, at: at(10))) == nil, "at the same time as the last event")
        #expect(open.problem(endingAt: at(5)) != nil)
        #expect(open.problem(endingAt: at(Workout.longestSeconds + 1)) != nil)
        #expect(open.problem(endingAt: at(20)) == nil)
        let ended = workout(end: 30)
        #expect(ended.problem(adding: WorkoutEvent(.lap, at: at(31))) != nil)
        #expect(ended.problem(endingAt: at(40)) != nil)
        #expect(workout(person: nil).problem == nil)
        var nobody = workout(person: nil)
        nobody.device = nil
        #expect(nobody.problem == "a workout is a person's or a device's")
        #expect(workout([WorkoutEvent(.resume, at: at(1))], end: 5).problem == "the workout is not paused")
    }

    @Test("active time leaves out pauses; laps partition the whole workout")
    func intervalsAndLaps() {
        let done = workout(
            [WorkoutEvent(.lap, at: at(100)), WorkoutEvent(.pause, at: at(150)), WorkoutEvent(.resume, at: at(210)), WorkoutEvent(.marker, at: at(220))],
            end: 300)
        let s = start.secondsSinceEpoch
        #expect(done.activeIntervals(now: at(1000)) == [TimeSpan(s, s + 150), TimeSpan(s + 210, s + 300)])
        #expect(done.laps(now: at(1000)) == [TimeSpan(s, s + 100), TimeSpan(s + 100, s + 300)])
        // Open and paused: nothing counts after the pause, whatever the time now.
        let paused = workout([WorkoutEvent(.pause, at: at(50))])
        #expect(paused.activeIntervals(now: at(500)) == [TimeSpan(s, s + 50)])
        #expect(workout().activeIntervals(now: at(70)) == [TimeSpan(s, s + 70)])
    }

    // MARK: Figures

    @Test("figures count the samples of the active time only, split by lap, with recovery and energy")
    func figures() {
        let ann = Person(name: "ann", birthYear: 1990, sex: .female, weightKilograms: 60, restingHeartRate: 50, maximumHeartRate: 200)
        let done = workout([WorkoutEvent(.lap, at: at(60)), WorkoutEvent(.pause, at: at(90)), WorkoutEvent(.resume, at: at(120))], end: 180)
        var builder = WorkoutSummary.Builder(workout: done, physiology: WorkoutPhysiology(person: ann, year: 2026), now: at(10_000))
        // One sample a second: 120 in the first lap, 160 in the second, 60 in the pause (not
        // counted), 150 at the end and 110 a minute later.
        for second in stride(from: 0.0, to: 260, by: 1) {
            let bpm: Double =
                switch second {
                case ..<60: 120
                case 90..<120: 60
                case 180...: second >= 235 ? 110 : 150
                default: 160
                }
            builder.add(bpm, at: at(second).secondsSinceEpoch, device: "strap-1")
        }
        let summary = builder.summary()
        #expect(summary.elapsedSeconds == 180)
        #expect(summary.activeSeconds == 150)
        let heartRate = summary.heartRate
        #expect(heartRate?.count == 150)
        #expect(heartRate?.minimum == 120 && heartRate?.maximum == 160)
        #expect(abs((heartRate?.average ?? 0) - (60 * 120 + 90 * 160) / 150) < 1e-9)
        // Zones of 200: 120 is zone 2 (120…140), 160 is zone 4 (160…180).
        let zones = summary.zones ?? []
        #expect(zones.map(\.seconds) == [0, 0, 60, 0, 90, 0])
        #expect(summary.laps.count == 2)
        #expect(summary.laps[0].activeSeconds == 60 && summary.laps[0].heartRate?.average == 120)
        #expect(summary.laps[1].activeSeconds == 90 && summary.laps[1].heartRate?.average == 160)
        #expect(summary.laps[1].zones?[4].seconds == 90)
        #expect(summary.recoveryOneMinute.map { abs($0 - 50) < 1e-9 } == true, "the last sample before the end, less the one nearest a minute later")
        #expect((summary.energyKilocalories ?? 0) > 0)
        #expect(summary.trimp > 0)
        // Nobody known: no zones, no energy, TRIMP on the defaults.
        var anonymous = WorkoutSummary.Builder(workout: done, physiology: WorkoutPhysiology(person: nil, year: 2026), now: at(10_000))
        anonymous.add(150, at: at(10).secondsSinceEpoch, device: "d")
        let bare = anonymous.summary()
        #expect(bare.zones == nil && bare.energyKilocalories == nil && bare.recoveryOneMinute == nil)
        #expect(bare.heartRate?.count == 1)
    }

    @Test("a gap longer than a few seconds counts only as far as the longest gap, and two straps each count their own time")
    func gapsAndStraps() {
        let done = workout(end: 100)
        var builder = WorkoutSummary.Builder(
            workout: done, physiology: WorkoutPhysiology(person: Person(name: "ann", maximumHeartRate: 200), year: 2026), now: at(1000))
        builder.add(150, at: at(0).secondsSinceEpoch, device: "a")
        builder.add(150, at: at(50).secondsSinceEpoch, device: "a")
        builder.add(100, at: at(0).secondsSinceEpoch, device: "b")
        let zones = builder.summary().zones ?? []
        #expect(zones[3].seconds == HeartRateZones.maximumGap + 1, "a gap of 50 s counts 5 s, the last sample 1 s")
        #expect(zones[1].seconds == 1)
    }

    @Test("a workout with thousands of events: each lap and pause counts its own seconds")
    func manyEvents() {
        // Every 10 s: a lap, then a pause 5 s later, resumed 2 s after it; samples each second.
        var events: [WorkoutEvent] = []
        for block in 0..<400 {
            let base = Double(block) * 10
            if block > 0 { events.append(WorkoutEvent(.lap, at: at(base))) }
            events += [WorkoutEvent(.pause, at: at(base + 5)), WorkoutEvent(.resume, at: at(base + 7))]
        }
        let done = workout(events, end: 4000)
        var builder = WorkoutSummary.Builder(
            workout: done, physiology: WorkoutPhysiology(person: Person(name: "ann", maximumHeartRate: 200), year: 2026), now: at(5000))
        for second in stride(from: 0.0, to: 4000, by: 1) { builder.add(150, at: at(second).secondsSinceEpoch, device: "a") }
        let summary = builder.summary()
        #expect(summary.laps.count == 400)
        #expect(summary.activeSeconds == 400 * 8)
        #expect(summary.laps.allSatisfy { $0.activeSeconds == 8 && $0.heartRate?.count == 8 })
        #expect(summary.heartRate?.count == 3200)
        #expect(summary.zones?[3].seconds == 3200, "150 is zone 3 of 200; paused seconds add nothing")
    }

    // MARK: The store

    @Test("a workout is started, takes its events, ends and is deleted, each change at a new anchor, with a tombstone")
    func lifecycle() throws {
        let store = try Fixture.memoryStore()
        try store.savePerson(Person(name: "ann"), creating: true)
        let open = workout()
        try store.saveWorkout(open)
        let anchorAfterStart = try store.currentAnchor()
        #expect(throws: HealthStoreError.self, "one open workout per person") { try store.saveWorkout(workout()) }
        #expect(throws: HealthStoreError.self, "an unknown person") { try store.saveWorkout(workout(person: "zed")) }
        try store.addWorkoutEvent(WorkoutEvent(.lap, at: at(60)), to: open.id, writer: "mary/coach")
        #expect(throws: HealthStoreError.self, "a resume while running") {
            try store.addWorkoutEvent(WorkoutEvent(.resume, at: at(61)), to: open.id, writer: nil)
        }
        let ended = try store.endWorkout(open.id, at: at(120), writer: nil)
        #expect(ended.end == at(120) && ended.events == [WorkoutEvent(.lap, at: at(60))])
        #expect(try store.currentAnchor() == anchorAfterStart + 2)
        #expect(try store.workout(open.id, reader: nil) == ended)
        // Ended, so the person may start another from its end.
        #expect(throws: HealthStoreError.self, "it would overlap the one ended") { try store.saveWorkout(workout()) }
        var next = workout()
        next.start = at(120)
        try store.saveWorkout(next)
        try store.deleteWorkout(open.id, writer: nil)
        #expect(try store.workout(open.id, reader: nil) == nil)
        #expect(throws: HealthStoreError.self) { try store.deleteWorkout(open.id, writer: nil) }
        let tombstones = try store.read { db in try String.fetchAll(db, sql: "SELECT uuid FROM deletedWorkout") }
        #expect(tombstones == [open.id])
        #expect(try store.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM workout WHERE uuid = ?", arguments: [open.id]) } == 0)
    }

    @Test("a source reads its own workouts and, with read authorization, everyone's; it changes only its own")
    func visibility() throws {
        let store = try Fixture.memoryStore()
        let mine = workout(person: nil, source: "mary/coach")
        var theirs = workout(person: nil, source: "mary/other")
        theirs.device = "strap-2"
        try store.saveWorkout(mine)
        try store.saveWorkout(theirs)
        #expect(try store.workouts(WorkoutQuery(reader: "mary/coach")).map(\.id) == [mine.id])
        #expect(try store.workout(theirs.id, reader: "mary/coach") == nil)
        #expect(throws: HealthStoreError.conflict("no workout \(theirs.id.debugDescription)")) {
            try store.endWorkout(theirs.id, at: at(10), writer: "mary/coach")
        }
        try store.setReadAuthorization(.sharingAuthorized, source: "mary/coach", type: .workout)
        #expect(Set(try store.workouts(WorkoutQuery(reader: "mary/coach")).map(\.id)) == [mine.id, theirs.id])
        #expect(throws: HealthStoreError.self, "read, but not its own") { try store.endWorkout(theirs.id, at: at(10), writer: "mary/coach") }
        #expect(try store.workouts(WorkoutQuery(device: "strap-2")).map(\.id) == [theirs.id])
        #expect(try store.workouts(WorkoutQuery(since: at(-100), until: at(-50))).isEmpty, "ends before the range: open ones run on")
        #expect(try store.workouts(WorkoutQuery(until: at(-1))).isEmpty)
        #expect(try store.workouts(WorkoutQuery(openOnly: true)).count == 2)
    }

    @Test("anchored changes give each changed workout once, as it is now, and each deletion, in the order they were made")
    func changes() throws {
        let store = try Fixture.memoryStore()
        let first = workout(person: nil, source: "mary/coach")
        var second = workout(person: nil, source: "mary/other")
        second.device = "strap-2"
        try store.saveWorkout(first)
        try store.saveWorkout(second)
        let all = try store.workoutChanges(since: 0, limit: 10, reader: nil)
        #expect(all.workouts.map(\.id) == [first.id, second.id] && all.deleted.isEmpty)
        let paged = try store.workoutChanges(since: 0, limit: 1, reader: nil)
        #expect(paged.workouts.map(\.id) == [first.id])
        #expect(try store.workoutChanges(since: paged.anchor, limit: 10, reader: nil).workouts.map(\.id) == [second.id])
        // Two changes to the first: it comes once, whole, after the second.
        try store.addWorkoutEvent(WorkoutEvent(.lap, at: at(5)), to: first.id, writer: nil)
        try store.endWorkout(first.id, at: at(10), writer: nil)
        let later = try store.workoutChanges(since: all.anchor, limit: 10, reader: nil)
        #expect(later.workouts.map(\.id) == [first.id] && later.workouts.first?.end == at(10))
        try store.deleteWorkout(second.id, writer: nil)
        let deletion = try store.workoutChanges(since: later.anchor, limit: 10, reader: nil)
        #expect(deletion.workouts.isEmpty && deletion.deleted == [second.id])
        #expect(try store.workoutChanges(since: deletion.anchor, limit: 10, reader: nil) == WorkoutChangeSet(workouts: [], deleted: [], anchor: deletion.anchor))
        // A reader sees its own source's changes, and deletions, only.
        let coach = try store.workoutChanges(since: 0, limit: 10, reader: "mary/coach")
        #expect(coach.workouts.map(\.id) == [first.id] && coach.deleted.isEmpty)
        #expect(try store.workoutChanges(since: 0, limit: 10, reader: "mary/other").deleted == [second.id])
    }

    @Test("an answer stops before the workout that would take it past its events, and pages on")
    func eventBudget() throws {
        let store = try Fixture.memoryStore()
        let markers = (0..<Workout.eventLimit).map { WorkoutEvent(.marker, at: at(Double($0) / 10)) }
        for index in 0..<20 {
            var full = workout(markers, end: 1000, person: nil)
            full.device = "strap-\(index)"
            try store.saveWorkout(full)
        }
        let fitting = WorkoutQuery.answerEventLimit / Workout.eventLimit
        #expect(try store.workouts(WorkoutQuery()).count == fitting)
        let first = try store.workoutChanges(since: 0, limit: 1000, reader: nil)
        #expect(first.workouts.count == fitting)
        let rest = try store.workoutChanges(since: first.anchor, limit: 1000, reader: nil)
        #expect(rest.workouts.count == 20 - fitting)
        #expect(Set((first.workouts + rest.workouts).map(\.id)).count == 20)
    }

    @Test("a workout outlives the store being closed and opened again")
    func survivesReopening() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("workouts-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("hrmd.sqlite").path
        let open = workout(person: nil)
        do {
            let store = try HealthStore.open(path: path, mode: .createIfMissing)
            try store.saveWorkout(open)
            try store.addWorkoutEvent(WorkoutEvent(.pause, at: at(5)), to: open.id, writer: "mary/coach")
        }
        let reopened = try HealthStore.open(path: path, mode: .existingOnly)
        let found = try #require(try reopened.workouts(WorkoutQuery(device: "strap-1", openOnly: true)).first)
        #expect(found.id == open.id && found.isPaused)
    }

    @Test("a person's workouts never overlap; a workout imported again is found, not stored twice")
    func overlapsAndImports() throws {
        let store = try Fixture.memoryStore()
        try store.savePerson(Person(name: "ann"), creating: true)
        let first = workout([WorkoutEvent(.lap, at: at(60))], end: 600)
        #expect(try store.importWorkout(first) == .stored)
        var again = first
        again.id = Workout.newID()
        #expect(try store.importWorkout(again) == .unchanged(id: first.id))
        var moved = again
        moved.end = at(601)
        #expect(throws: HealthStoreError.self, "the same start with another end overlaps") { try store.importWorkout(moved) }
        var inside = workout(end: 300)
        inside.start = at(100)
        #expect(throws: HealthStoreError.self, "a workout inside another") { try store.saveWorkout(inside) }
        var openBefore = workout()
        openBefore.start = at(-10)
        #expect(throws: HealthStoreError.self, "an open one started before lasts on into the other") { try store.saveWorkout(openBefore) }
        var after = workout(end: 900)
        after.start = at(600)
        #expect(try store.importWorkout(after) == .stored, "one that starts where the other ends")
        var otherSource = first
        otherSource.id = Workout.newID()
        otherSource.source = "someone/else"
        #expect(throws: HealthStoreError.self, "another source's copy overlaps") { try store.importWorkout(otherSource) }
        var nobody = workout(end: 600, person: nil)
        nobody.id = Workout.newID()
        #expect(try store.importWorkout(nobody) == .stored, "a device's workouts do not meet a person's")
        #expect(try store.workouts(WorkoutQuery()).count == 3)
    }

    @Test("events are packed in their workout's row, 9 bytes each, and read back exactly")
    func packedEvents() throws {
        let store = try Fixture.memoryStore()
        let events = (0..<100).map { WorkoutEvent([.lap, .marker, .segmentStart, .segmentEnd][$0 % 4], at: at(Double($0) + 0.000_001)) }
        var whole = workout(events, end: 1000, person: nil)
        whole.events.insert(WorkoutEvent(.pause, at: at(0)), at: 0)
        whole.events.insert(WorkoutEvent(.resume, at: at(0)), at: 1)
        try store.saveWorkout(whole)
        #expect(try store.workout(whole.id, reader: nil) == whole)
        let bytes = try store.read { db in try Int.fetchOne(db, sql: "SELECT length(events) FROM workout WHERE uuid = ?", arguments: [whole.id]) }
        #expect(bytes == 102 * 9)
        #expect(WorkoutEventPacking.bytes(of: whole.events).count == 102 * WorkoutEventPacking.bytesPerEvent)
        #expect(try WorkoutEventPacking.events(of: WorkoutEventPacking.bytes(of: whole.events)) == whole.events)
        #expect(throws: HealthStoreError.self, "a length that is not whole events") { try WorkoutEventPacking.events(of: Data([1, 2, 3])) }
        let before = Timestamp(microsecondsSinceEpoch: -1_234_567)
        #expect(try WorkoutEventPacking.events(of: WorkoutEventPacking.bytes(of: [WorkoutEvent(.marker, at: before)])).first?.time == before)
    }

    @Test("a v12 store's events, a row each, move into their workouts' rows")
    func eventsUpgrade() throws {
        let queue = try DatabaseQueue()
        try Schema.migrator.migrate(queue, upTo: Schema.workouts)
        try queue.write { db in
            try db.execute(sql: "INSERT INTO source (id, name) VALUES (1, 'mary/coach')")
            try db.execute(sql: """
                INSERT INTO workout (id, uuid, anchor, sourceId, device, activity, start, "end") VALUES
                    (1, 'a', 1, 1, 'strap-1', 'rowing', 0, 100), (2, 'b', 2, 1, 'strap-2', 'yoga', 0, 100)
                """)
            try db.execute(sql: """
                INSERT INTO workoutEvent (workoutId, position, type, time) VALUES
                    (1, 1, 'resume', 20), (1, 0, 'pause', 10), (1, 2, 'lap', 30)
                """)
        }
        try Schema.migrator.migrate(queue)
        try queue.read { db in
            let first: Data = try #require(try Data.fetchOne(db, sql: "SELECT events FROM workout WHERE id = 1"))
            #expect(try WorkoutEventPacking.events(of: first).map { "\($0.type.rawValue)@\($0.time.microsecondsSinceEpoch)" }
                == ["pause@10", "resume@20", "lap@30"])
            #expect(try Data.fetchOne(db, sql: "SELECT events FROM workout WHERE id = 2")?.isEmpty == true)
            #expect(try !db.tableExists("workoutEvent"))
        }
    }
}
