import Foundation
import HealthModel
import HealthStore
import HealthUnits
import TestSupport
import Timestamps

/// A year of 1 Hz heart rate (31.5M samples) saved through the store API in bulk; then daily
/// statistics over 90 days and over the year: `hrmctl stats --by 1d` (whole process) and
/// `HealthStore.statistics` (in process) against DuckDB (from PyPI) grouping the same rows,
/// loaded in memory beforehand, by day (query only). Everything in UTC.
struct YearBenchmark {
    let scratch: BenchScratch
    let count = 365 * 86_400
    let runs = 7
    static let batch = 50_000
    /// Where the year starts: 2025-01-01T00:00:00Z.
    static let start = Timestamp(microsecondsSinceEpoch: 1_735_689_600_000_000)

    /// A range of whole UTC days.
    struct Days {
        var name: String
        var since: Timestamp
        var count: Int
        var until: Timestamp { since.advanced(bySeconds: Double(count) * 86_400) }
    }

    /// Builds the year and returns the path of its store, for the benchmarks that query it.
    @discardableResult
    func run() async throws -> String {
        print("year: 1 Hz heart rate for 365 days (\(count) samples); statistics by day against DuckDB; TZ=UTC")
        let path = scratch.file("year.sqlite")
        let csv = scratch.file("year.csv")
        let build = try Self.buildStore(path: path, count: count, csv: csv)
        report("bulk save of the year through the store API", "\(format(build)) s", "\(format(Double(count) / build / 1000, 0))k samples/s")

        let ranges = [
            Days(name: "90 days", since: Self.start.advanced(bySeconds: 200 * 86_400), count: 90),
            Days(name: "the year", since: Self.start, count: 365),
        ]
        let duck = try await duckDB(csv: csv, ranges: ranges)
        try? FileManager.default.removeItem(atPath: csv)
        let store = try HealthStore.open(path: path, mode: .existingOnly)
        for range in ranges {
            let hrmctl = try await hrmctlStats(path, range)
            let inProcess = try statistics(store, range)
            report("HealthStore.statistics by day, \(range.name)", duration(inProcess), "in process; median of \(runs)")
            guard let duck = duck?[range.name] else { continue }
            report(
                "peer: DuckDB GROUP BY day, \(range.name)", duration(duck.seconds),
                "\(duck.form), the faster plain form (\(duck.otherForm) \(duration(duck.otherSeconds))); query only; median of \(runs)")
            if let hrmctl { report("ratio hrmctl stats / DuckDB, \(range.name)", "\(format(hrmctl / duck.seconds))×", "goal < 1") }
        }
        print("")
        return path
    }

    /// `hrmctl stats --by 1d --output json` over `range`, checked to print a line a day.
    private func hrmctlStats(_ path: String, _ range: Days) async throws -> Double? {
        let name = "hrmctl stats --by 1d --output json, \(range.name)"
        var arguments = ["stats", "--by", "1d", "--output", "json", "--store", path]
        if range.count < 365 {
            arguments += ["--since", RFC3339.string(from: range.since), "--until", RFC3339.string(from: range.until)]
        }
        let command = BenchCommand(executable: BuiltProducts.hrmctl, arguments: arguments)
        let check = try ChildProcess(command.executable, arguments, environment: command.environment, outputDirectory: scratch.directory.path)
        let lines = try await check.wait(timeout: .seconds(600)) == .exited(0) ? check.standardOutput.split(separator: "\n").count : 0
        guard lines == range.count else {
            report(name, "failed", "\(lines) lines for \(range.count) days: \(check.standardError.prefix(200))")
            return nil
        }
        let seconds = try await medianWallSeconds(command, name: name, runs: runs, in: scratch)
        if let seconds { report(name, duration(seconds), "process included; median of \(runs)") }
        return seconds
    }

    /// `HealthStore.statistics` by UTC day over `range`, in process.
    private func statistics(_ store: HealthStore, _ range: Days) throws -> Double {
        var buckets = 0
        let times = try (0..<runs).map { _ in
            try measure {
                buckets = try store.statistics(of: .heartRate, by: .days(.gmt), since: range.since, until: range.until).count
            }
        }
        precondition(buckets == range.count, "\(buckets) daily buckets for \(range.count) days")
        return median(times)
    }

    /// Saves `count` samples of 1 Hz heart rate from `start` through the store API (hrmd may
    /// share heart rate) and, when `csv` is given, writes the same rows as CSV (t in µs,
    /// value) for DuckDB. Returns the seconds the saves took.
    static func buildStore(path: String, count: Int, csv: String?, start: Timestamp = YearBenchmark.start) throws -> Double {
        let store = try HealthStore.open(path: path, mode: .createIfMissing)
        try store.setShareAuthorization(.sharingAuthorized, source: "hrmd", type: .heartRate)
        let source = HealthSource(name: "hrmd", version: "bench")
        let device = HealthDevice(localIdentifier: "AA:BB:CC:DD:EE:FF", name: "bench strap")
        let metadata = SampleMetadata(sensorLocation: .chest, sensorContact: true)
        var random = BenchRandom(state: 365)
        var file: UnsafeMutablePointer<FILE>?
        if let csv {
            guard let opened = fopen(csv, "w") else { throw POSIXError(.EIO) }
            file = opened
            fputs("t,value\n", opened)
        }
        defer { if let file { fclose(file) } }
        var elapsed = 0.0
        var index = 0
        while index < count {
            let chunk = min(batch, count - index)
            let values = (0..<chunk).map { _ in Double(random.next(in: 50...180)) }
            elapsed += try measure {
                let samples = try (0..<chunk).map { offset in
                    let time = Timestamp(microsecondsSinceEpoch: start.microsecondsSinceEpoch + Int64(index + offset) * 1_000_000)
                    return try QuantitySample(
                        type: .heartRate, quantity: Quantity(unit: .countPerMinute, doubleValue: values[offset]),
                        start: time, end: time, device: device, metadata: metadata)
                }
                _ = try store.save(samples, from: source)
            }
            if let file {
                var text = ""
                text.reserveCapacity(chunk * 24)
                let base = start.microsecondsSinceEpoch + Int64(index) * 1_000_000
                for offset in 0..<chunk { text += "\(base + Int64(offset) * 1_000_000),\(Int(values[offset]))\n" }
                fputs(text, file)
            }
            index += chunk
        }
        return elapsed
    }

    /// DuckDB's median time per range for the daily GROUP BY in its two plain forms, integer
    /// division of the microseconds and date_trunc on a timestamp column, the faster first.
    private func duckDB(csv: String, ranges: [Days]) async throws -> [String: (form: String, seconds: Double, otherForm: String, otherSeconds: Double)]? {
        let script = scratch.file("duck.py")
        try """
            import json, statistics, sys, time
            import duckdb
            csv, runs, ranges = sys.argv[1], int(sys.argv[2]), json.loads(sys.argv[3])
            con = duckdb.connect()
            con.execute("CREATE TABLE sample AS SELECT t, make_timestamp(t) AS ts, value FROM read_csv(?, header = true)", [csv])
            forms = {
                "integer division": ("SELECT t // 86400000000 AS day, count(*), min(value), avg(value), max(value) FROM sample "
                                     "{} GROUP BY day ORDER BY day", "WHERE t >= ? AND t < ?"),
                "date_trunc": ("SELECT date_trunc('day', ts) AS day, count(*), min(value), avg(value), max(value) FROM sample "
                               "{} GROUP BY day ORDER BY day", "WHERE ts >= make_timestamp(?::BIGINT) AND ts < make_timestamp(?::BIGINT)"),
            }
            result = {}
            for name, since, until, days in ranges:
                whole = days == 365
                result[name] = {}
                for form, (sql, where) in forms.items():
                    query, arguments = sql.format("" if whole else where), [] if whole else [since, until]
                    times = []
                    for _ in range(runs + 1):
                        start = time.perf_counter()
                        rows = con.execute(query, arguments).fetchall()
                        times.append(time.perf_counter() - start)
                    assert len(rows) == days, (form, name, len(rows))
                    result[name][form] = statistics.median(times[1:])
            print(json.dumps(result))
            """.write(toFile: script, atomically: true, encoding: .utf8)
        let rangeArgument = "[" + ranges.map { #"["\#($0.name)", \#($0.since.microsecondsSinceEpoch), \#($0.until.microsecondsSinceEpoch), \#($0.count)]"# }
            .joined(separator: ", ") + "]"
        let child = try ChildProcess(
            "/usr/bin/env", ["python3", script, csv, "\(runs)", rangeArgument], outputDirectory: scratch.directory.path)
        guard try await child.wait(timeout: .seconds(900)) == .exited(0),
            let answer = try? JSONSerialization.jsonObject(with: Data(child.standardOutput.utf8)) as? [String: [String: Double]]
        else {
            report("peer: DuckDB", "not measured", "python3 -m pip install duckdb, then rerun (\(child.standardError.split(separator: "\n").last ?? ""))")
            return nil
        }
        return answer.compactMapValues { forms in
            let sorted = forms.sorted { $0.value < $1.value }
            guard sorted.count == 2 else { return nil }
            return (sorted[0].key, sorted[0].value, sorted[1].key, sorted[1].value)
        }
    }
}
