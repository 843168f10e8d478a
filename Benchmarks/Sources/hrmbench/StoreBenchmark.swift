import Foundation
import HealthModel
import HealthStore
import HealthUnits
import TestSupport
import Timestamps

/// Bulk save of 1M heart-rate samples through the store API, against the `sqlite3` shell
/// importing the same rows into an equivalent table (same columns, same identity index).
/// (Bytes on disk per sample and reads: the size and read benchmarks, on strap-like data.)
struct StoreBenchmark {
    let scratch: BenchScratch
    let count = 1_000_000
    let batch = 10_000
    let rounds = 3

    /// Runs the benchmark; returns the seconds the bulk save took.
    @discardableResult
    func run() async throws -> Double {
        print("store: bulk save of \(count) heart-rate samples (1 Hz, one strap, batches of \(batch)); best of \(rounds)")
        var random = BenchRandom(state: 7)
        let values = (0..<count).map { _ in Double(random.next(in: 50...180)) }
        let start = Timestamp(microsecondsSinceEpoch: 1_767_225_600_000_000)

        var best = Double.infinity
        for round in 1...rounds {
            let elapsed = try bulkSave(values: values, start: start, path: scratch.file("bulk-\(round).sqlite"))
            best = min(best, elapsed)
            if ProcessInfo.processInfo.environment["HRMBENCH_VERBOSE"] != nil { print("    round \(round): \(format(elapsed)) s") }
        }
        report("hrmd store API", "\(format(best)) s", "\(format(Double(count) / best / 1000, 0))k samples/s")

        var peerBest = Double.infinity
        for round in 1...rounds {
            if let peer = try await sqliteShellImport(values: values, start: start, round: round) { peerBest = min(peerBest, peer) }
        }
        if peerBest.isFinite {
            report("peer: sqlite3 shell .import", "\(format(peerBest)) s", "\(format(Double(count) / peerBest / 1000, 0))k rows/s")
            report("ratio hrmd / sqlite3 shell", "\(format(best / peerBest))×", "goal ≤ 0.5×")
        }
        print("")
        return best
    }

    private func bulkSave(values: [Double], start: Timestamp, path: String) throws -> Double {
        let store = try HealthStore.open(path: path, mode: .createIfMissing)
        try store.setShareAuthorization(.sharingAuthorized, source: "hrmd", type: .heartRate)
        let source = HealthSource(name: "hrmd", version: "bench")
        let device = HealthDevice(localIdentifier: "AA:BB:CC:DD:EE:FF", name: "bench strap")
        let metadata = SampleMetadata(sensorLocation: .chest, sensorContact: true)
        var stored = 0
        let elapsed = try measure {
            var index = 0
            while index < count {
                let samples = try (index..<min(index + batch, count)).map { i in
                    let time = Timestamp(microsecondsSinceEpoch: start.microsecondsSinceEpoch + Int64(i) * 1_000_000)
                    return try QuantitySample(
                        type: .heartRate, quantity: Quantity(unit: .countPerMinute, doubleValue: values[i]),
                        start: time, end: time, device: device, metadata: metadata)
                }
                stored += try store.save(samples, from: source).stored
                index += batch
            }
        }
        precondition(stored == count, "the bulk save stored \(stored) of \(count)")
        return elapsed
    }

    private func sqliteShellImport(values: [Double], start: Timestamp, round: Int) async throws -> Double? {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/sqlite3") else {
            report("peer: sqlite3 shell .import", "not measured", "no /usr/bin/sqlite3")
            return nil
        }
        let csv = scratch.file("rows.csv")
        var text = ""
        text.reserveCapacity(values.count * 48)
        for (i, value) in values.enumerated() {
            let time = start.microsecondsSinceEpoch + Int64(i) * 1_000_000
            text += "1,1,1,\(time),\(time),\(Int(value)),1,1\n"
        }
        try text.write(toFile: csv, atomically: true, encoding: .utf8)
        let script = scratch.file("import.sql")
        try """
            PRAGMA journal_mode=WAL;
            CREATE TABLE sample (typeId INTEGER NOT NULL, sourceId INTEGER NOT NULL, deviceId INTEGER,
                start INTEGER NOT NULL, "end" INTEGER NOT NULL, value REAL NOT NULL,
                sensorLocation INTEGER, sensorContact INTEGER);
            CREATE UNIQUE INDEX sampleIdentity ON sample (typeId, start, sourceId, IFNULL(deviceId, 0));
            .import --csv \(csv) sample
            SELECT COUNT(*) FROM sample;
            """.write(toFile: script, atomically: true, encoding: .utf8)
        let begin = ContinuousClock.now
        let child = try ChildProcess("/usr/bin/sqlite3", [scratch.file("peer-\(round).sqlite")], outputDirectory: scratch.directory.path, stdinPath: script)
        let termination = try await child.wait(timeout: .seconds(600))
        let elapsed = seconds(ContinuousClock.now - begin)
        guard termination == .exited(0), child.standardOutput.contains("\(values.count)") else {
            report("peer: sqlite3 shell .import", "failed", String(child.standardError.prefix(200)))
            return nil
        }
        return elapsed
    }
}
