import Foundation

/// Bytes on disk per sample: the store, filled through its API as hrmd fills it (0.5 s
/// batches), against the same rows in the plain indexed table a Python user would make, for a
/// week of one strap at 1 Hz, two hours of 20 straps at 4 Hz and a day of RR intervals (per
/// beat); Gorilla's published figure as a reference.
struct SizeBenchmark {
    let scratch: BenchScratch

    /// Returns the week's files, for the read benchmark.
    func run() async throws -> RecordingFiles? {
        print("size: bytes on disk per sample after a WAL checkpoint, saved as hrmd saves (0.5 s batches), against a plain indexed table")
        let week = try await RecordingFiles.week(in: scratch)
        if let week { try await reportSizes(of: week, "heart rate, 1 strap at 1 Hz, a week", per: "sample", goal: "goal ≤ 4 B") }

        let straps = StrapRecording.heartRate(straps: 20, perStrap: 2 * 3600 * 4, periodMs: 250, steadiness: 0.85, seed: 20) {
            Double($0 * 3 - 30)
        }
        if let files = try await RecordingFiles.make(straps, name: "straps", in: scratch) {
            try await reportSizes(of: files, "heart rate, 20 straps at 4 Hz, 2 h", per: "sample", goal: "goal ≤ 4 B")
        }

        let beats = StrapRecording.rrIntervals(beats: 86_400, seed: 1024)
        if let files = try await RecordingFiles.make(beats, name: "beats", in: scratch) {
            try await reportSizes(of: files, "RR intervals, 1 strap, a day", per: "beat", goal: "")
        }
        report("reference: Gorilla on Facebook's series", "1.37 B per point", "published (VLDB 2015), not measured here")
        print("")
        return week
    }

    private func reportSizes(of files: RecordingFiles, _ name: String, per unit: String, goal: String) async throws {
        let count = Double(files.recording.count)
        guard let store = try await storedBytes(files.store, name: name, in: scratch),
            let plain = try await storedBytes(files.plain, name: "peer: plain table", in: scratch)
        else { return }
        let saveRate = "saved at \(format(count / files.saveSeconds / 1000, 0))k/s"
        report(
            name, "\(format(Double(store.inUse) / count)) B per \(unit)",
            ["\(files.recording.count) \(unit)s", mebibytes(store), saveRate, goal].filter { !$0.isEmpty }.joined(separator: "; "))
        report(
            "peer: \(files.recording.plainTableName)", "\(format(Double(plain.inUse) / count)) B per row",
            "\(mebibytes(plain)); store / table \(format(Double(store.inUse) / Double(plain.inUse)))×")
    }

    private func mebibytes(_ bytes: (inUse: Int, file: Int)) -> String {
        let inUse = format(Double(bytes.inUse) / 1_048_576, 1) + " MiB"
        let file = format(Double(bytes.file) / 1_048_576, 1) + " MiB"
        return inUse == file ? inUse : "\(inUse) in use of a \(file) file"
    }
}
