import Foundation
import HealthModel
import HealthStore
import TestSupport
import Timestamps

/// Reading a week of 1 Hz heart rate (604,800 samples) back: one hour in process through
/// `HealthStore.samples` against Python's sqlite3 module on the plain indexed table; one hour
/// and the whole week through `hrmctl` (JSON, and the CSV export) against the sqlite3 shell's
/// `-json` on the plain table, whole processes timed in A/B pairs, output to /dev/null; and,
/// for the hour, the floor under hrmctl: the shell's own job done on hrmctl's stack
/// (`Benchmarks/Sources/stack-floor`), against the shell in the same way.
struct ReadBenchmark {
    let scratch: BenchScratch
    /// The week, when the size benchmark made it.
    let week: RecordingFiles?
    let inProcessRuns = 201
    let hourPairs = 21
    let weekPairs = 5
    /// The hour read: the 101st of the week.
    let since = Timestamp(microsecondsSinceEpoch: 1_767_225_600_000_000 + 100 * 3_600_000_000)
    var until: Timestamp { since.advanced(bySeconds: 3600) }

    func run() async throws {
        print("read: a week of 1 Hz heart rate (604800 samples) read back, the store against the plain indexed table; TZ=UTC")
        var files = week
        if files == nil { files = try await RecordingFiles.week(in: scratch) }
        guard let files else { return }
        let hour = files.recording.rows.filter { $0.start >= since.microsecondsSinceEpoch && $0.start < until.microsecondsSinceEpoch }.count

        try await hourInProcess(files, expected: hour)
        try await hourByCommand(files, expected: hour)

        let weekJSON = BenchCommand(executable: BuiltProducts.hrmctl, arguments: ["samples", "--output", "json", "--store", files.store])
        let weekCSV = BenchCommand(executable: BuiltProducts.hrmctl, arguments: ["export", "--format", "csv", "--store", files.store])
        let shellWeek = BenchCommand(executable: "/usr/bin/sqlite3", arguments: ["-json", files.plain, "SELECT t, bpm FROM hr ORDER BY t"])
        for (command, name) in [(weekJSON, "hrmctl samples --output json, the week"), (weekCSV, "hrmctl export --format csv, the week")] {
            try await PairedTiming.measure(command, named: name, against: shellWeek, named: "sqlite3 -json", pairs: weekPairs, in: scratch)?
                .reportFigures(name, peer: "peer: sqlite3 -json, the week", ratio: "ratio hrmctl / sqlite3 -json", goal: "goal ≤ 1×")
        }
        print("")
    }

    /// `HealthStore.samples` for the hour against Python's sqlite3 module (query and fetchall).
    private func hourInProcess(_ files: RecordingFiles, expected: Int) async throws {
        let store = try HealthStore.open(path: files.store, mode: .existingOnly)
        let query = SampleQuery(type: .heartRate, since: since, until: until)
        var read = 0
        let runs = try (0..<inProcessRuns).map { _ in try measure { read = try store.samples(query).count } }
        precondition(read == expected, "the store read \(read) of the hour's \(expected) samples")
        let inProcess = median(runs)
        report("HealthStore.samples, one hour, in process", duration(inProcess), "\(read) samples; median of \(inProcessRuns); goal ≤ 1 ms")

        let script = scratch.file("read_hour.py")
        try """
            import sqlite3, statistics, sys, time
            path, since, until, runs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
            con = sqlite3.connect(path)
            times = []
            for _ in range(runs):
                start = time.perf_counter()
                rows = con.execute("SELECT t, bpm FROM hr WHERE t >= ? AND t < ? ORDER BY t", (since, until)).fetchall()
                times.append(time.perf_counter() - start)
            print(len(rows), statistics.median(times))
            """.write(toFile: script, atomically: true, encoding: .utf8)
        let python = try scratch.python(
            script, [files.plain, "\(since.microsecondsSinceEpoch)", "\(until.microsecondsSinceEpoch)", "\(inProcessRuns)"])
        let termination = try await python.wait(timeout: .seconds(300))
        let answer = python.standardOutput.split(whereSeparator: \.isWhitespace)
        guard termination == .exited(0), answer.count == 2, Int(answer[0]) == expected, let peer = Double(answer[1]) else {
            report("peer: python3 sqlite3, the same hour", "not measured", "\(termination): \(python.standardError.suffix(200))")
            return
        }
        report("peer: python3 sqlite3, the same hour", duration(peer), "query + fetchall only; median of \(inProcessRuns)")
        report("ratio store / python3 sqlite3", "\(format(inProcess / peer))×")
    }

    /// `hrmctl samples` for the hour against the sqlite3 shell, both checked to print the hour.
    private func hourByCommand(_ files: RecordingFiles, expected: Int) async throws {
        let hrmctl = BenchCommand(
            executable: BuiltProducts.hrmctl,
            arguments: [
                "samples", "--output", "json", "--since", RFC3339.string(from: since), "--until", RFC3339.string(from: until),
                "--store", files.store,
            ])
        let query = "SELECT t, bpm FROM hr WHERE t >= \(since.microsecondsSinceEpoch) AND t < \(until.microsecondsSinceEpoch) ORDER BY t"
        let shell = BenchCommand(executable: "/usr/bin/sqlite3", arguments: ["-json", files.plain, query])
        // The shell's own job on hrmctl's stack (Benchmarks/Sources/stack-floor): what the stack costs.
        let floor = BenchCommand(executable: BenchProducts.path(of: "stack-floor"), arguments: [files.plain, query])
        for (command, name) in [(hrmctl, "hrmctl samples"), (shell, "sqlite3 -json"), (floor, "stack-floor")] {
            let child = try ChildProcess(command.executable, command.arguments, environment: command.environment, outputDirectory: scratch.directory.path)
            let lines = try await child.wait(timeout: .seconds(60)) == .exited(0) ? child.standardOutput.split(separator: "\n").count : 0
            guard lines == expected else {
                report("\(name), one hour", "failed", "printed \(lines) lines for \(expected) samples: \(child.standardError.prefix(200))")
                return
            }
        }
        try await PairedTiming.measure(hrmctl, named: "hrmctl samples", against: shell, named: "sqlite3 -json", pairs: hourPairs, in: scratch)?
            .reportFigures(
                "hrmctl samples --output json, one hour", peer: "peer: sqlite3 -json, the same hour", ratio: "ratio hrmctl / sqlite3 -json",
                goal: "goal ≤ 2×")
        try await PairedTiming.measure(floor, named: "stack-floor", against: shell, named: "sqlite3 -json", pairs: hourPairs, in: scratch)?
            .reportFigures(
                "floor: the shell's query and JSON on hrmctl's stack", peer: "peer: sqlite3 -json, the same hour",
                ratio: "ratio floor / sqlite3 -json", goal: "static Swift runtime, Foundation (GRDB's), GRDB, ArgumentParser; no hrmctl code")
    }
}
