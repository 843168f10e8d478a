import Foundation
import HealthModel
import HealthStore
import TestSupport

/// The real `hrmd` with 20 mock straps at 4 Hz, each run stopped with SIGTERM: CPU time per
/// 1000 frames (in all, and at the margin: a long run minus a short one, so start-up does not
/// count), peak RSS, and bytes written to storage per sample stored. No peer here: the one
/// that writes (the bleak logger) is in the `ble` benchmark.
struct DaemonBenchmark {
    let scratch: BenchScratch
    let straps = 20
    let hz = 4

    /// What one run of hrmd cost.
    struct Run {
        var frames: Int
        var stored: Int
        var cpuSeconds: Double
        var peakKB: Int
        var anonymousKB: Int
        var fileBackedKB: Int
        var writtenBytes: Int?
        /// Counted through the store API after the run.
        var storedByType: [SampleType: Int]
    }

    func run() async throws {
        print("daemon: hrmd with \(straps) mock straps × \(hz) Hz")
        guard let short = try await runDaemon(seconds: 5), let long = try await runDaemon(seconds: 35) else { return }
        report("frames received (35 s run)", "\(long.frames)", "\(long.stored) samples stored: heart rate, RR, energy")
        report("hrmd CPU time per 1000 frames, in all", "\(format(long.cpuSeconds / Double(long.frames) * 1e6, 1)) ms", "\(format(long.cpuSeconds, 2)) s CPU for the 35 s run")
        let marginal = (long.cpuSeconds - short.cpuSeconds) / Double(long.frames - short.frames)
        report("hrmd CPU time per 1000 frames, marginal", "\(format(marginal * 1e6, 1)) ms", "35 s run minus 5 s run")
        report("hrmd peak RSS (VmHWM)", "\(format(Double(long.peakKB) / 1024, 1)) MB", "goal < 20 MB")
        report("  of which anonymous (heap, stacks)", "\(format(Double(long.anonymousKB) / 1024, 1)) MB")
        report("  of which file-backed (code, read-only data)", "\(format(Double(long.fileBackedKB) / 1024, 1)) MB")
        let stored = long.storedByType.values.reduce(0, +)
        if let written = long.writtenBytes, stored > 0 {
            let split = [(SampleType.heartRate, "heart rate"), (.rrInterval, "RR"), (.activeEnergyBurned, "energy")]
                .map { "\(long.storedByType[$0.0] ?? 0) \($0.1)" }.joined(separator: ", ")
            report(
                "bytes written per stored sample (35 s run)", "\(format(Double(written) / Double(stored), 1)) B",
                "write_bytes \(format(Double(written) / 1_048_576, 1)) MiB just before SIGTERM; \(stored) stored: \(split)")
        } else {
            report("bytes written per stored sample", "not measured", "hrmd's /proc/PID/io unreadable, or nothing stored")
        }
        report("peer: bytes written per stored sample", "none here", "the peer that writes, the bleak logger, is in `hrmbench ble`")
        print("")
    }

    private func runDaemon(seconds: Int) async throws -> Run? {
        let store = scratch.file("daemon-\(seconds).sqlite")
        guard try await grantHRMD(store: store, in: scratch.directory.path, for: "hrmd") else { return nil }
        var arguments = ["--store", store, "--log-level", "info"]
        for index in 1...straps { arguments += ["--sensor", "mock:hz=\(hz),seed=\(index),contact-loss=0"] }
        let daemon = try ChildProcess(BuiltProducts.hrmd, arguments, outputDirectory: scratch.directory.path)
        let run = try await StoppedDaemon.run(daemon, for: .seconds(seconds))
        guard run.termination == .exited(0), let usage = daemon.usage else {
            report("hrmd", "failed", "\(run.termination): \(daemon.standardError.prefix(300))")
            return nil
        }
        // The last log line: "ingest stopped: N frames, M samples stored, …".
        let log = daemon.standardError
        let frames = number(before: " frames", in: log)
        let stored = number(before: " samples stored", in: log)
        let memory = run.memory
        return Run(
            frames: frames, stored: stored, cpuSeconds: cpuSeconds(usage), peakKB: memory.peakKB, anonymousKB: memory.anonymousKB,
            fileBackedKB: memory.fileBackedKB, writtenBytes: run.writtenBytes, storedByType: try storedSamples(in: store))
    }
}
