import Foundation
import SensorDecoding
import TestSupport
import Timestamps
import TraceFormat

/// `hrmctl replay` of a generated 1M-frame trace into a fresh store: frames per second, next
/// to the store's bulk save of the same number of samples (measured in the same run).
struct ReplayBenchmark {
    let scratch: BenchScratch
    let count = 1_000_000
    /// Seconds the store benchmark took for the same count, when it ran.
    let bulkSaveSeconds: Double?

    func run() async throws {
        print("replay: hrmctl replay of a generated \(count)-frame trace (1 Hz heart rate, no RR)")
        let trace = scratch.file("bench.trace.jsonl")
        var text = TraceLine.header() + "\n"
        text.reserveCapacity(count * 140)
        var random = BenchRandom(state: 11)
        let start = Timestamp(microsecondsSinceEpoch: 1_767_225_600_000_000)
        for index in 0..<count {
            let measurement = HeartRateMeasurement(heartRate: UInt16(random.next(in: 50...180)), sensorContact: .detected)
            text += TraceLine.encode(SensorFrame(
                time: start.advanced(bySeconds: Double(index)), transport: .ble, device: "AA:BB:CC:DD:EE:FF",
                kind: .notify, characteristic: .heartRateMeasurement, value: measurement.encoded())) + "\n"
        }
        try text.write(toFile: trace, atomically: false, encoding: .utf8)
        var elapsed = Double.infinity
        var summary = ""
        for round in 1...3 {
            let store = scratch.file("replay-\(round).sqlite")
            let grant = try ChildProcess(BuiltProducts.hrmctl, ["auth", "grant", "hrmd", "heart-rate", "--store", store], outputDirectory: scratch.directory.path)
            _ = try await grant.wait(timeout: .seconds(30))
            let begin = ContinuousClock.now
            let replay = try ChildProcess(BuiltProducts.hrmctl, ["replay", "--store", store, trace], outputDirectory: scratch.directory.path)
            let termination = try await replay.wait(timeout: .seconds(900))
            elapsed = min(elapsed, seconds(ContinuousClock.now - begin))
            guard termination == .exited(0) else {
                report("hrmctl replay", "failed", "\(termination): \(replay.standardError.prefix(300))")
                return
            }
            summary = replay.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        report("hrmctl replay (best of 3)", "\(format(elapsed)) s", "\(format(Double(count) / elapsed / 1000, 0))k frames/s; \(summary)")
        if let bulkSaveSeconds {
            report("ratio replay / store bulk save", "\(format(elapsed / bulkSaveSeconds))×", "goal ≤ 1.5×")
        }
        print("")
    }
}
