import Foundation
import HealthStore
import HealthUnits
import TestSupport
import Timestamps

/// A year of 1 Hz heart rate (31.5M samples): `hrmctl stats --by 1d` over the whole year next
/// to the sqlite3 shell's plain GROUP BY on the same file and DuckDB (from PyPI) on the same
/// rows; and one hour of `hrmctl samples`.
struct YearBenchmark {
    let scratch: BenchScratch
    let count = 365 * 86_400
    static let batch = 50_000
    /// Where the year starts: 2025-01-01T00:00:00Z.
    static let start = Timestamp(microsecondsSinceEpoch: 1_735_689_600_000_000)

    /// Builds the year and returns the path of its store, for the benchmarks that query it.
    @discardableResult
    func run() async throws -> String {
        print("year: 1 Hz heart rate for 365 days (\(count) samples)")
        let path = scratch.file("year.sqlite")
        let csv = scratch.file("year.csv")
        let start = Self.start
        let build = try Self.buildStore(path: path, count: count, csv: csv)
        report("bulk save of the year through the store API", "\(format(build)) s", "\(format(Double(count) / build / 1000, 0))k samples/s, rollups included")

        let stats = try await bestOf(3) { try await timed(BuiltProducts.hrmctl, ["stats", "--by", "1d", "--output", "json", "--store", path]) }
        report("hrmctl stats --by 1d, whole year", stats.map { "\(format($0 * 1000, 0)) ms" } ?? "failed", "best of 3, process included")
        let shell = try await bestOf(3) {
            try await timed("/usr/bin/sqlite3", [path, "SELECT date(start / 1000000, 'unixepoch', 'localtime') AS day, COUNT(*), MIN(value), AVG(value), MAX(value) FROM sample WHERE typeId = 1 GROUP BY day;"])
        }
        report("peer: sqlite3 shell plain GROUP BY", shell.map { "\(format($0 * 1000, 0)) ms" } ?? "failed", "same file")
        let duck = try await duckDB(csv: csv)
        report("peer: DuckDB GROUP BY (rows in memory)", duck.map { "\(format($0 * 1000, 0)) ms" } ?? "not measured")
        if let stats, let duck { report("ratio hrmctl stats / DuckDB", "\(format(stats / duck, 2))×", "goal ≤ 2×") }
        if let stats, let shell { report("ratio hrmctl stats / sqlite3 shell", "\(format(stats / shell, 2))×") }

        let hourStart = RFC3339.string(from: start.advanced(bySeconds: 200 * 86_400 + 3600 * 13))
        let hourEnd = RFC3339.string(from: start.advanced(bySeconds: 200 * 86_400 + 3600 * 14))
        let hour = try await bestOf(5) {
            try await timed(BuiltProducts.hrmctl, ["samples", "--since", hourStart, "--until", hourEnd, "--output", "json", "--store", path])
        }
        report("hrmctl samples, one hour (3600)", hour.map { "\(format($0 * 1000, 1)) ms" } ?? "failed", "best of 5, process included; goal < 10 ms")
        let store = try HealthStore.open(path: path, mode: .existingOnly)
        var inProcess = Double.infinity
        for _ in 0..<5 {
            inProcess = min(inProcess, try measure {
                _ = try store.samples(SampleQuery(type: .heartRate, since: RFC3339.parse(hourStart), until: RFC3339.parse(hourEnd)))
            })
        }
        report("store query, one hour (3600), in process", "\(format(inProcess * 1000, 1)) ms", "best of 5")
        print("")
        return path
    }

    /// Saves `count` samples of 1 Hz heart rate from `start` through the store API (hrmd may
    /// share heart rate) and, when `csv` is given, writes the same rows as CSV (seconds,
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
                text.reserveCapacity(chunk * 16)
                let base = start.microsecondsSinceEpoch / 1_000_000 + Int64(index)
                for offset in 0..<chunk { text += "\(base + Int64(offset)),\(Int(values[offset]))\n" }
                fputs(text, file)
            }
            index += chunk
        }
        return elapsed
    }

    private func timed(_ executable: String, _ arguments: [String]) async throws -> Double? {
        let begin = ContinuousClock.now
        let child = try ChildProcess(executable, arguments, outputDirectory: scratch.directory.path)
        guard try await child.wait(timeout: .seconds(600)) == .exited(0) else { return nil }
        return seconds(ContinuousClock.now - begin)
    }

    private func bestOf(_ rounds: Int, _ body: () async throws -> Double?) async throws -> Double? {
        var best: Double?
        for _ in 0..<rounds {
            guard let value = try await body() else { return nil }
            best = min(best ?? value, value)
        }
        return best
    }

    /// DuckDB's time for the same GROUP BY over the same rows, loaded in memory first.
    private func duckDB(csv: String) async throws -> Double? {
        let script = scratch.file("duck.py")
        try """
            import sys, time
            import duckdb
            con = duckdb.connect()
            con.execute("CREATE TABLE sample AS SELECT * FROM read_csv(?, header = true, columns = {'t': 'BIGINT', 'value': 'DOUBLE'})", [sys.argv[1]])
            best = None
            for _ in range(3):
                start = time.perf_counter()
                rows = con.execute("SELECT CAST(to_timestamp(t) AS DATE) AS day, COUNT(*), MIN(value), AVG(value), MAX(value) FROM sample GROUP BY day ORDER BY day").fetchall()
                elapsed = time.perf_counter() - start
                best = elapsed if best is None else min(best, elapsed)
            assert len(rows) == 365, len(rows)
            print(best)
            """.write(toFile: script, atomically: true, encoding: .utf8)
        let child = try ChildProcess("/usr/bin/env", ["python3", script, csv], outputDirectory: scratch.directory.path)
        guard try await child.wait(timeout: .seconds(900)) == .exited(0) else {
            report("peer: DuckDB", "not measured", "python3 -m pip install duckdb, then rerun (\(child.standardError.split(separator: "\n").last ?? ""))")
            return nil
        }
        return Double(child.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines))
    }
}
