import Foundation
import HealthModel
import HealthStore
import HealthUnits
import TestSupport
import Timestamps

/// Samples as straps deliver them (`SeriesBenchmarkData`): saved into a store through the API
/// the way hrmd saves them, every 0.5 s one batch of what all straps sent in that half second;
/// and the same rows in the plain indexed SQLite table a Python user would make (written with
/// the sqlite3 shell: the file is the same).
struct StrapRecording {
    struct Row {
        var strap: Int
        /// When the host received it, µs: what decides its batch.
        var arrival: Int64
        var start: Int64
        var end: Int64
        /// In `unit`.
        var value: Double
    }

    let type: SampleType
    /// The unit the values are given in, as the ingest pipeline gives them.
    let unit: HealthUnit
    let straps: Int
    /// In order of arrival.
    let rows: [Row]

    /// `straps` straps of `perStrap` heart rates each, one every `periodMs` with ±30 ms of
    /// arrival jitter, in whole bpm.
    static func heartRate(
        straps: Int, perStrap: Int, periodMs: Double, steadiness: Double, seed: UInt64, driftPPM: (Int) -> Double
    ) -> StrapRecording {
        var data = SeriesBenchmarkData(seed: seed)
        var rows: [Row] = []
        rows.reserveCapacity(straps * perStrap)
        for strap in 0..<straps {
            let times = data.arrivals(count: perStrap, periodMs: periodMs, jitterMs: 30, driftPPM: driftPPM(strap))
            let rates = data.heartRates(count: perStrap, steadiness: steadiness)
            for (time, rate) in zip(times, rates) { rows.append(Row(strap: strap, arrival: time, start: time, end: time, value: rate)) }
        }
        rows.sort { ($0.arrival, $0.strap) < ($1.arrival, $1.strap) }
        return StrapRecording(type: .heartRate, unit: .countPerMinute, straps: straps, rows: rows)
    }

    /// One strap's RR intervals for `beats` beats, as the ingest pipeline makes them from its
    /// notifications: raw / 1024 s each, the last of a notification ending at its arrival and
    /// each one before ending where the next starts.
    static func rrIntervals(beats: Int, seed: UInt64) -> StrapRecording {
        var data = SeriesBenchmarkData(seed: seed)
        let beats = data.beats(count: beats)
        var rows: [Row] = []
        rows.reserveCapacity(beats.count)
        for notification in data.rrNotifications(beats, jitterMs: 30) {
            var end = Timestamp(microsecondsSinceEpoch: notification.arrival)
            var walkedBack: [Row] = []
            for raw in notification.intervals.reversed() {
                let seconds = Double(raw) / 1024
                let start = end.advanced(bySeconds: -seconds)
                walkedBack.append(Row(
                    strap: 0, arrival: notification.arrival, start: start.microsecondsSinceEpoch, end: end.microsecondsSinceEpoch,
                    value: seconds))
                end = start
            }
            rows += walkedBack.reversed()
        }
        return StrapRecording(type: .rrInterval, unit: .second, straps: 1, rows: rows)
    }

    var count: Int { rows.count }

    /// Saves every row through the store API into a new store at `path` (hrmd may share the
    /// type) in hrmd's 0.5 s batches, each strap its own device; returns the seconds the
    /// saves took. The store is closed on return.
    func save(to path: String) throws -> Double {
        let store = try HealthStore.open(path: path, mode: .createIfMissing)
        try store.setShareAuthorization(.sharingAuthorized, source: "hrmd", type: type)
        let source = HealthSource(name: "hrmd", version: "bench")
        let devices = (0..<straps).map { strap in
            HealthDevice(localIdentifier: String(format: "C0:FF:EE:00:%02X:%02X", strap / 256, strap % 256), name: "bench strap \(strap)")
        }
        let metadata = SampleMetadata(sensorLocation: .chest, sensorContact: true)
        var batch: [QuantitySample] = []
        var window: Int64?
        var stored = 0
        let elapsed = try measure {
            for row in rows {
                let rowWindow = row.arrival / 500_000
                if rowWindow != window, !batch.isEmpty {
                    stored += try store.save(batch, from: source).stored
                    batch.removeAll(keepingCapacity: true)
                }
                window = rowWindow
                batch.append(try QuantitySample(
                    type: type, quantity: Quantity(unit: unit, doubleValue: row.value),
                    start: Timestamp(microsecondsSinceEpoch: row.start), end: Timestamp(microsecondsSinceEpoch: row.end),
                    device: devices[row.strap], metadata: metadata))
            }
            if !batch.isEmpty { stored += try store.save(batch, from: source).stored }
        }
        precondition(stored == rows.count, "the store took \(stored) of \(rows.count) samples")
        return elapsed
    }

    /// The plain table's name and columns: hr(t, bpm) for one strap, hr(t, strap, bpm) for
    /// several, rr(t, ms) for RR intervals (t: µs; an RR row's t is its beat).
    var plainTable: (name: String, columns: [String]) {
        if type == .rrInterval { return ("rr", ["t INTEGER", "ms REAL"]) }
        return ("hr", straps == 1 ? ["t INTEGER", "bpm INTEGER"] : ["t INTEGER", "strap INTEGER", "bpm INTEGER"])
    }

    /// How the plain table reads in a report line.
    var plainTableName: String {
        let table = plainTable
        return "\(table.name)(\(table.columns.map { $0.split(separator: " ")[0] }.joined(separator: ", "))) + index on t"
    }

    /// Writes the rows into the plain table of a new file at `path` with the sqlite3 shell
    /// (table and index first, then the rows, as executemany would); false, reported, when
    /// that fails.
    func writePlainTable(to path: String, in scratch: BenchScratch) async throws -> Bool {
        let csv = scratch.file("\(plainTable.name)-\(UUID().uuidString.prefix(8)).csv")
        var text = ""
        text.reserveCapacity(rows.count * 24)
        for row in rows {
            switch (type == .rrInterval, straps == 1) {
            case (true, _): text += "\(row.end),\(row.value * 1000)\n"
            case (false, true): text += "\(row.end),\(Int(row.value))\n"
            case (false, false): text += "\(row.end),\(row.strap),\(Int(row.value))\n"
            }
        }
        try text.write(toFile: csv, atomically: false, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: csv) }
        let table = plainTable
        let script = csv + ".sql"
        try """
            CREATE TABLE \(table.name) (\(table.columns.joined(separator: ", ")));
            CREATE INDEX \(table.name)_t ON \(table.name) (t);
            .import --csv \(csv) \(table.name)
            SELECT COUNT(*) FROM \(table.name);
            """.write(toFile: script, atomically: false, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: script) }
        let child = try ChildProcess("/usr/bin/sqlite3", [path], outputDirectory: scratch.directory.path, stdinPath: script)
        let termination = try await child.wait(timeout: .seconds(600))
        guard termination == .exited(0), child.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines) == "\(rows.count)" else {
            report("peer: plain table \(plainTableName)", "not written", "\(termination): \(child.standardError.prefix(200))")
            return false
        }
        return true
    }
}

/// A recording saved both ways: the store, and the plain table of the same rows.
struct RecordingFiles {
    let recording: StrapRecording
    let store: String
    let plain: String
    /// Seconds the store's saves took.
    let saveSeconds: Double

    /// Nil (reported) when the plain table cannot be written.
    static func make(_ recording: StrapRecording, name: String, in scratch: BenchScratch) async throws -> RecordingFiles? {
        let name = "\(name)-\(UUID().uuidString.prefix(8))"
        let store = scratch.file("\(name).sqlite")
        let saveSeconds = try recording.save(to: store)
        let plain = scratch.file("\(name)-plain.sqlite")
        guard try await recording.writePlainTable(to: plain, in: scratch) else { return nil }
        return RecordingFiles(recording: recording, store: store, plain: plain, saveSeconds: saveSeconds)
    }

    /// A week of one strap at 1 Hz (604,800 heart rates; the points of the series
    /// benchmark's week), for the size and read benchmarks.
    static func week(in scratch: BenchScratch) async throws -> RecordingFiles? {
        let week = StrapRecording.heartRate(straps: 1, perStrap: 7 * 86_400, periodMs: 1000, steadiness: 0.6, seed: 13) { _ in 20 }
        return try await make(week, name: "week", in: scratch)
    }
}
