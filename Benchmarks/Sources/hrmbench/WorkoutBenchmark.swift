import Foundation
import SensorFrames
import TestSupport
import Timestamps
import TraceFormat

/// Workouts, in two parts, everything in UTC:
///
/// - The figures of a 3-hour workout at 4 Hz (43,200 heart-rate samples of one strap, three
///   laps, no pauses): `hrmctl workout show ID --output json` against the sqlite3 shell computing the
///   same figures (average, minimum, maximum and seconds in each zone, of the workout and of
///   each lap, and TRIMP) with window functions over the plain table hr(t, bpm) of the same
///   samples (`WorkoutPeerQuery`). Both are run once and checked to agree, then timed as whole
///   processes in A/B pairs, output to /dev/null.
/// - The bytes a store spends per workout and per event (`WorkoutStorageBenchmark`), the
///   workouts entered with hrmctl one command at a time, as a user enters them. No peer: a goal.
struct WorkoutBenchmark {
    let scratch: BenchScratch

    func run() async throws {
        let recording = WorkoutRecording(seed: 42)
        print(
            "workout: a \(WorkoutRecording.hours)-hour workout at 4 Hz (\(recording.rates.count) samples, 1 strap, "
                + "\(WorkoutRecording.lapEvents.count + 1) laps) shown by hrmctl against sqlite3 window functions; bytes per workout; TZ=UTC")
        try await WorkoutFiguresBenchmark(scratch: scratch, recording: recording).run()
        try await WorkoutStorageBenchmark(scratch: scratch).run()
        print("")
    }
}

/// A store set up for workouts with hrmctl, as a user sets one up: hrmd may store heart rate,
/// and ann (maximum 190 count/min, resting 60; zones by percent of the maximum, the default)
/// is its person.
enum WorkoutStore {
    static let person = "ann"
    static let maximumHeartRate = 190
    static let restingHeartRate = 60
    /// Where zones 1 to 5 start, as fractions of the maximum (percent-max).
    static let zoneFractions = [0.5, 0.6, 0.7, 0.8, 0.9]

    /// Creates the store at `path`; false (reported under `name`) when a command fails.
    static func create(_ path: String, name: String, in scratch: BenchScratch) async throws -> Bool {
        let add = ["person", "add", person, "--max-hr", "\(maximumHeartRate)", "--resting-hr", "\(restingHeartRate)", "--store", path]
        let grant = ["auth", "grant", "hrmd", "heart-rate", "--store", path]
        guard try await hrmctl(grant, name: name, in: scratch) != nil else { return false }
        return try await hrmctl(add, name: name, in: scratch) != nil
    }

    /// Runs `hrmctl arguments` to its end: its standard output, or nil (reported under `name`)
    /// when it fails.
    static func hrmctl(_ arguments: [String], name: String, in scratch: BenchScratch) async throws -> String? {
        let child = try ChildProcess(
            BuiltProducts.hrmctl, arguments, environment: BenchCommand.utc, outputDirectory: scratch.directory.path)
        let termination = try await child.wait(timeout: .seconds(600))
        guard termination == .exited(0) else {
            let command = "hrmctl " + arguments.prefix(2).joined(separator: " ")
            report(name, "not measured", "\(command): \(termination): \(child.standardError.prefix(200))")
            return nil
        }
        return child.standardOutput
    }
}

/// One strap's heart rate through a 3-hour run, a sample every 250 ms: a slow wave between 100
/// and 185 count/min (a 23-minute period) with ±2 count/min of noise, in whole count/min, so
/// that every zone from 1 to 5 gets time. The workout starts with the first sample and ends
/// 250 ms after the last; its two `lap` events fall on samples, at the first and second hour.
struct WorkoutRecording {
    static let hours = 3
    static let periodMicroseconds: Int64 = 250_000
    /// 2026-11-20T09:00:00Z.
    static let start = Timestamp(microsecondsSinceEpoch: 1_795_165_200_000_000)
    static let end = Timestamp(microsecondsSinceEpoch: start.microsecondsSinceEpoch + Int64(hours) * 3_600_000_000)
    static let lapEvents = [Int64(1), 2].map { Timestamp(microsecondsSinceEpoch: start.microsecondsSinceEpoch + $0 * 3_600_000_000) }
    static let device = "bench-strap"

    let rates: [UInt8]

    init(seed: UInt64) {
        var random = BenchRandom(state: seed)
        let count = Self.hours * 3600 * 4
        rates = (0..<count).map { index in
            let wave = 142.5 + 42.5 * sin(2 * Double.pi * Double(index) / (23 * 60 * 4))
            return UInt8(min(185, max(100, (wave + Double(random.next(in: -2...2))).rounded())))
        }
    }

    func time(of index: Int) -> Timestamp {
        Timestamp(microsecondsSinceEpoch: Self.start.microsecondsSinceEpoch + Int64(index) * Self.periodMicroseconds)
    }

    /// The store: the samples replayed from an hrmd trace of the strap's notifications (flags
    /// 0, an 8-bit heart rate), the strap assigned to the person from an hour before, and the
    /// workout entered with hrmctl. Returns the workout's id; nil when a command fails (reported).
    func makeStore(_ path: String, in scratch: BenchScratch) async throws -> String? {
        let name = "hrmctl workout show, the store"
        let trace = scratch.file("workout.trace.jsonl")
        var text = TraceLine.header() + "\n"
        text.reserveCapacity(rates.count * 140)
        for (index, rate) in rates.enumerated() {
            text += TraceLine.encode(SensorFrame(
                time: time(of: index), transport: .ble, device: SensorID(Self.device), kind: .notify,
                characteristic: .heartRateMeasurement, value: [0x00, rate])) + "\n"
        }
        try text.write(toFile: trace, atomically: false, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: trace) }
        let at = { (time: Timestamp) in RFC3339.string(from: time) }
        let assign = ["person", "assign", WorkoutStore.person, Self.device, "--from", at(Self.start.advanced(bySeconds: -3600))]
        guard try await WorkoutStore.create(path, name: name, in: scratch),
            try await WorkoutStore.hrmctl(["replay", trace, "--store", path], name: name, in: scratch) != nil,
            try await WorkoutStore.hrmctl(assign + ["--store", path], name: name, in: scratch) != nil,
            let started = try await WorkoutStore.hrmctl(
                ["workout", "start", "--person", WorkoutStore.person, "--activity", "running", "--at", at(Self.start), "--store", path],
                name: name, in: scratch),
            let id = started.split(separator: "\n").last.map(String.init)
        else { return nil }
        for lap in Self.lapEvents {
            guard try await WorkoutStore.hrmctl(["workout", "lap", id, "--at", at(lap), "--store", path], name: name, in: scratch) != nil
            else { return nil }
        }
        guard try await WorkoutStore.hrmctl(["workout", "end", id, "--at", at(Self.end), "--store", path], name: name, in: scratch) != nil
        else { return nil }
        return id
    }

    /// The same samples in the plain table hr(t INTEGER PRIMARY KEY, bpm REAL) (t: µs) of a new
    /// file at `path`, written with the sqlite3 shell; false (reported) when that fails.
    func writePlainTable(to path: String, in scratch: BenchScratch) async throws -> Bool {
        let csv = scratch.file("workout-hr.csv")
        var text = ""
        text.reserveCapacity(rates.count * 22)
        for (index, rate) in rates.enumerated() { text += "\(time(of: index).microsecondsSinceEpoch),\(rate)\n" }
        try text.write(toFile: csv, atomically: false, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: csv) }
        let script = csv + ".sql"
        try """
            CREATE TABLE hr (t INTEGER PRIMARY KEY, bpm REAL);
            .import --csv \(csv) hr
            SELECT COUNT(*) FROM hr;
            """.write(toFile: script, atomically: false, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: script) }
        let child = try ChildProcess("/usr/bin/sqlite3", [path], outputDirectory: scratch.directory.path, stdinPath: script)
        let termination = try await child.wait(timeout: .seconds(300))
        guard termination == .exited(0), child.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines) == "\(rates.count)" else {
            report("peer: plain table hr(t, bpm)", "not written", "\(termination): \(child.standardError.prefix(200))")
            return false
        }
        return true
    }
}

/// The peer's query, as a user of sqlite3 writes it over hr(t, bpm): LEAD() over t gives each
/// sample's duration, counted as docs/workouts.md counts it (until the next sample, at most
/// 5 s, the last 1 s, never past the end); samples count from the start to before the end;
/// a sample's zone is the highest whose lower bound, a fraction of the maximum, it reaches.
/// Laps split at the `lap` events (which fall on samples, so no sample spans two laps) and are
/// summed by one GROUP BY; the workout's row (stretch 0) adds up the laps' sums, which takes
/// 0.7× the time of grouping the samples a second time for it.
enum WorkoutPeerQuery {
    static func sql() -> String {
        let start = WorkoutRecording.start.microsecondsSinceEpoch, end = WorkoutRecording.end.microsecondsSinceEpoch
        let maximum = WorkoutStore.maximumHeartRate, resting = WorkoutStore.restingHeartRate
        let laps = WorkoutRecording.lapEvents.enumerated().map { "WHEN t < \($1.microsecondsSinceEpoch) THEN \($0 + 1)" }
        let zones = WorkoutStore.zoneFractions.enumerated().reversed().map { "WHEN bpm >= \($1) * \(maximum) THEN \($0 + 1)" }
        let zoneSums = (0...5).map { "SUM(CASE WHEN zone = \($0) THEN us ELSE 0 END) AS us\($0)" }
        let workoutZones = (0...5).map { "ROUND(SUM(us\($0)) / 1e6, 2) AS zone\($0)" }
        let lapZones = (0...5).map { "ROUND(us\($0) / 1e6, 2)" }
        return """
            WITH timed AS (
              SELECT bpm, MIN(LEAD(t, 1, t + 1000000) OVER (ORDER BY t), t + 5000000, \(end)) - t AS us,
                     CASE \(laps.joined(separator: " ")) ELSE \(laps.count + 1) END AS lap
              FROM hr WHERE t >= \(start) AND t < \(end)
            ), zoned AS (
              SELECT bpm, us, lap, CASE \(zones.joined(separator: " ")) ELSE 0 END AS zone,
                     MIN(1, MAX(0, (bpm - \(resting)) / (\(maximum) - \(resting)))) AS reserve
              FROM timed
            ), laps AS (
              SELECT lap, SUM(bpm) AS total, COUNT(*) AS n, MIN(bpm) AS minimum, MAX(bpm) AS maximum,
                     \(zoneSums.joined(separator: ", ")),
                     SUM(us / 6e7 * reserve * 0.64 * exp(1.67 * reserve)) AS trimp
              FROM zoned GROUP BY lap
            )
            SELECT 0 AS stretch, ROUND(SUM(total) / SUM(n), 2) AS average, MIN(minimum) AS minimum, MAX(maximum) AS maximum,
                   \(workoutZones.joined(separator: ", ")), ROUND(SUM(trimp), 2) AS trimp
            FROM laps
            UNION ALL
            SELECT lap, ROUND(total / n, 2), minimum, maximum, \(lapZones.joined(separator: ", ")), ROUND(trimp, 2) FROM laps
            ORDER BY stretch;
            """
    }
}

/// A workout's figures as one side prints them: the whole workout, then each lap.
struct WorkoutFigures {
    struct Stretch {
        var average: Double
        var minimum: Double
        var maximum: Double
        /// Zones 0 to 5.
        var zoneSeconds: [Double]
    }

    var overall: Stretch
    var laps: [Stretch]
    var trimp: Double

    /// From `hrmctl workout show --output json`.
    init?(hrmctl json: String) {
        struct HeartRate: Decodable { var average, minimum, maximum: Double }
        struct Zone: Decodable { var seconds: Double }
        struct Lap: Decodable {
            var heartRate: HeartRate
            var zones: [Zone]
        }
        struct Shown: Decodable {
            var heartRate: HeartRate
            var zones: [Zone]
            var laps: [Lap]
            var trimp: Double
        }
        guard let shown = try? JSONDecoder().decode(Shown.self, from: Data(json.utf8)) else { return nil }
        let stretch = { (rate: HeartRate, zones: [Zone]) in
            Stretch(average: rate.average, minimum: rate.minimum, maximum: rate.maximum, zoneSeconds: zones.map(\.seconds))
        }
        overall = stretch(shown.heartRate, shown.zones)
        laps = shown.laps.map { stretch($0.heartRate, $0.zones) }
        trimp = shown.trimp
    }

    /// From the rows `sqlite3 -json` prints for `WorkoutPeerQuery`.
    init?(peer json: String) {
        guard let rows = try? JSONDecoder().decode([[String: Double]].self, from: Data(json.utf8)), rows.count > 1 else { return nil }
        let stretches = rows.compactMap { row -> Stretch? in
            guard let average = row["average"], let minimum = row["minimum"], let maximum = row["maximum"] else { return nil }
            let zones = (0...5).compactMap { row["zone\($0)"] }
            return zones.count == 6 ? Stretch(average: average, minimum: minimum, maximum: maximum, zoneSeconds: zones) : nil
        }
        guard stretches.count == rows.count, let trimp = rows[0]["trimp"] else { return nil }
        overall = stretches[0]
        laps = Array(stretches.dropFirst())
        self.trimp = trimp
    }

    /// What differs from `other` by more than `tolerance` (both round to hundredths); empty
    /// when they agree.
    func differences(from other: WorkoutFigures, tolerance: Double = 0.01) -> [String] {
        var found: [String] = []
        func compare(_ name: String, _ mine: Double, _ theirs: Double) {
            if !(abs(mine - theirs) <= tolerance + 1e-9) { found.append("\(name) \(mine) against \(theirs)") }
        }
        func compare(_ name: String, _ mine: Stretch, _ theirs: Stretch) {
            compare("\(name) average", mine.average, theirs.average)
            compare("\(name) minimum", mine.minimum, theirs.minimum)
            compare("\(name) maximum", mine.maximum, theirs.maximum)
            guard mine.zoneSeconds.count == theirs.zoneSeconds.count else {
                found.append("\(name): \(mine.zoneSeconds.count) zones against \(theirs.zoneSeconds.count)")
                return
            }
            for (zone, (a, b)) in zip(mine.zoneSeconds, theirs.zoneSeconds).enumerated() { compare("\(name) zone \(zone) seconds", a, b) }
        }
        compare("workout", overall, other.overall)
        compare("TRIMP", trimp, other.trimp)
        guard laps.count == other.laps.count else { return found + ["\(laps.count) laps against \(other.laps.count)"] }
        for (index, (mine, theirs)) in zip(laps, other.laps).enumerated() { compare("lap \(index + 1)", mine, theirs) }
        return found
    }
}

/// `hrmctl workout show ID --output json` of the recording's workout against the sqlite3
/// shell's `-json` of `WorkoutPeerQuery` over the plain table of the same samples: both run
/// once and their figures checked to agree (within the hundredth both round to), then timed as
/// whole processes in A/B pairs, output to /dev/null.
struct WorkoutFiguresBenchmark {
    let scratch: BenchScratch
    let recording: WorkoutRecording
    let pairs = 21

    func run() async throws {
        let store = scratch.file("workout.sqlite"), plain = scratch.file("workout-plain.sqlite")
        guard let id = try await recording.makeStore(store, in: scratch), try await recording.writePlainTable(to: plain, in: scratch) else {
            return
        }
        let show = BenchCommand(executable: BuiltProducts.hrmctl, arguments: ["workout", "show", id, "--output", "json", "--store", store])
        let peer = BenchCommand(executable: "/usr/bin/sqlite3", arguments: ["-json", plain, WorkoutPeerQuery.sql()])
        guard let shown = try await output(of: show, name: "hrmctl workout show").flatMap(WorkoutFigures.init(hrmctl:)),
            let computed = try await output(of: peer, name: "peer: sqlite3 -json").flatMap(WorkoutFigures.init(peer:))
        else {
            report("hrmctl workout show --output json, 3 h", "not measured", "a side's figures could not be read")
            return
        }
        let differences = shown.differences(from: computed)
        precondition(differences.isEmpty, "hrmctl and the sqlite3 peer compute different figures: \(differences.joined(separator: "; "))")
        report(
            "figures of hrmctl and of the peer", "the same",
            "average \(format(shown.overall.average)), seconds in zones 0–5 "
                + shown.overall.zoneSeconds.map { format($0) }.joined(separator: "/")
                + ", TRIMP \(format(shown.trimp)); and each of \(shown.laps.count) laps; within 0.01")
        try await PairedTiming.measure(
            show, named: "hrmctl workout show", against: peer, named: "sqlite3 -json", pairs: pairs, in: scratch)?
            .reportFigures(
                "hrmctl workout show --output json, 3 h at 4 Hz", peer: "peer: sqlite3 -json, LEAD() over hr(t, bpm)",
                ratio: "ratio hrmctl / sqlite3", goal: "goal ≤ 1.5×")
    }

    /// What `command` prints; nil (reported) when it fails.
    private func output(of command: BenchCommand, name: String) async throws -> String? {
        let child = try ChildProcess(
            command.executable, command.arguments, environment: command.environment, outputDirectory: scratch.directory.path)
        let termination = try await child.wait(timeout: .seconds(120))
        guard termination == .exited(0) else {
            report(name, "failed", "\(termination): \(child.standardError.prefix(200))")
            return nil
        }
        return child.standardOutput
    }
}

/// The bytes a store spends on workouts: the pages of the b-trees of the table `workout` (whose
/// rows hold their events, packed) and of its indexes, by sqlite's dbstat (without dbstat: the
/// pages in use against a store without workouts), in a fresh store of workouts without events
/// and in another of as many workouts with 16 events each (12 laps and two pauses, each
/// resumed); an event costs the difference per workout over 16. Every
/// workout start, event and end is its own hrmctl command, as a user enters them; the workouts
/// are one person's, at consecutive hours, 30 minutes each.
struct WorkoutStorageBenchmark {
    let scratch: BenchScratch
    /// Workouts in each store (the one with events takes 18 commands a workout).
    let bare = 200
    let eventful = 200
    let eventsEach = 16
    /// 2027-01-01T00:00:00Z.
    static let firstStart = Timestamp(microsecondsSinceEpoch: 1_798_761_600_000_000)

    /// A store of `count` workouts and what their tables use.
    struct Filled {
        var count: Int
        var bytes: Int
        /// By b-tree; empty without dbstat.
        var byTree: [String: Int]
        var commands: Int
        var seconds: Double

        var perWorkout: Double { Double(bytes) / Double(count) }

        var note: String {
            let trees =
                byTree.isEmpty
                ? "pages in use against a store without workouts (no dbstat)"
                : byTree.sorted { ($0.value, $1.key) > ($1.value, $0.key) }
                    .map { "\($0.key) \(format(Double($0.value) / Double(count), 0))" }.joined(separator: ", ")
            return "\(count) workouts: \(trees); entered by \(commands) hrmctl commands in \(format(seconds, 0)) s"
        }
    }

    /// What dbstat says of one store.
    enum TreeBytes {
        case measured([String: Int])
        case noDBStat
        case failed
    }

    func run() async throws {
        guard let without = try await fill(workouts: bare, events: 0), let with = try await fill(workouts: eventful, events: eventsEach)
        else { return }
        report("a workout without events", "\(format(without.perWorkout, 0)) B", without.note)
        report("a workout with \(eventsEach) events", "\(format(with.perWorkout, 0)) B", with.note)
        let perEvent = (with.perWorkout - without.perWorkout) / Double(eventsEach)
        report(
            "an event", "\(format(perEvent, 1)) B",
            "the two stores' bytes per workout, their difference over \(eventsEach) events; goal ≤ 1 KB per workout plus 16 B per event")
    }

    /// A fresh store of `workouts` workouts of `events` events each, entered with hrmctl; nil
    /// (reported) when a command fails.
    private func fill(workouts: Int, events: Int) async throws -> Filled? {
        let name = "a workout with \(events) events"
        let path = scratch.file("workouts-\(events).sqlite")
        guard try await WorkoutStore.create(path, name: name, in: scratch) else { return nil }
        let person = ["--person", WorkoutStore.person, "--store", path]
        var commands = 0
        var elapsed = 0.0
        for index in 0..<workouts {
            let start = Self.firstStart.advanced(bySeconds: Double(index) * 3600)
            var steps = [["workout", "start", "--activity", "running", "--at", RFC3339.string(from: start)]]
            for event in 0..<events {
                let kind = event % 8 == 6 ? "pause" : event % 8 == 7 ? "resume" : "lap"
                steps.append(["workout", kind, "--at", RFC3339.string(from: start.advanced(bySeconds: Double(event + 1) * 100))])
            }
            steps.append(["workout", "end", "--at", RFC3339.string(from: start.advanced(bySeconds: 1800))])
            for arguments in steps {
                let command = BenchCommand(executable: BuiltProducts.hrmctl, arguments: arguments + person)
                guard let seconds = try await command.wallSeconds(name: name, in: scratch, timeout: .seconds(60)) else { return nil }
                elapsed += seconds
                commands += 1
            }
        }
        switch try await treeBytes(path, name: name) {
        case .measured(let trees):
            return Filled(count: workouts, bytes: trees.values.reduce(0, +), byTree: trees, commands: commands, seconds: elapsed)
        case .failed:
            return nil
        case .noDBStat:
            let empty = scratch.file("workouts-none.sqlite")
            defer { try? FileManager.default.removeItem(atPath: empty) }
            guard try await WorkoutStore.create(empty, name: name, in: scratch),
                let used = try await storedBytes(path, name: name, in: scratch),
                let base = try await storedBytes(empty, name: name, in: scratch)
            else { return nil }
            return Filled(count: workouts, bytes: used.inUse - base.inUse, byTree: [:], commands: commands, seconds: elapsed)
        }
    }

    /// The bytes of the pages of each b-tree of `workout` (the table and its indexes), from
    /// dbstat; a failure other than a missing dbstat is reported.
    private func treeBytes(_ path: String, name: String) async throws -> TreeBytes {
        let sql = """
            SELECT name, SUM(pgsize) FROM dbstat
            WHERE name IN (SELECT name FROM sqlite_schema WHERE tbl_name = 'workout') GROUP BY name;
            """
        let child = try ChildProcess("/usr/bin/sqlite3", [path, sql], outputDirectory: scratch.directory.path)
        let termination = try await child.wait(timeout: .seconds(120))
        if termination != .exited(0), child.standardError.contains("no such table: dbstat") { return .noDBStat }
        var trees: [String: Int] = [:]
        for line in child.standardOutput.split(separator: "\n") {
            let fields = line.split(separator: "|")
            if fields.count == 2, let bytes = Int(fields[1]) { trees[String(fields[0])] = bytes }
        }
        guard termination == .exited(0), trees["workout"] != nil else {
            report(name, "not measured", "sqlite3 dbstat: \(termination) \(child.standardError.prefix(200))")
            return .failed
        }
        return .measured(trees)
    }
}
