import Foundation
import TestSupport

/// The real `hrmd` with 20 mock straps at 4 Hz: CPU time per 1000 frames and peak RSS.
struct DaemonBenchmark {
    let scratch: BenchScratch
    let straps = 20
    let hz = 4
    let duration = 30

    func run() async throws {
        let frames = straps * hz * duration
        print("daemon: hrmd with \(straps) mock straps × \(hz) Hz for \(duration) s (\(frames) notifications)")
        let store = scratch.file("daemon.sqlite")
        let hrmctl = BuiltProducts.hrmctl
        let grant = try ChildProcess(hrmctl, ["auth", "grant", "hrmd", "all", "--store", store], outputDirectory: scratch.directory.path)
        guard try await grant.wait(timeout: .seconds(30)) == .exited(0) else {
            report("hrmd", "not measured", "hrmctl auth grant failed: \(grant.standardError)")
            return
        }
        var arguments = ["--store", store, "--duration", "\(duration)", "--log-level", "warning"]
        for index in 1...straps { arguments += ["--sensor", "mock:hz=\(hz),seed=\(index),contact-loss=0"] }
        let daemon = try ChildProcess(BuiltProducts.hrmd, arguments, outputDirectory: scratch.directory.path)
        let termination = try await daemon.wait(timeout: .seconds(Double(duration) + 60))
        guard termination == .exited(0), let usage = daemon.usage else {
            report("hrmd", "failed", "\(termination): \(daemon.standardError.prefix(300))")
            return
        }
        let cpu = cpuSeconds(usage)
        report("hrmd CPU time per 1000 frames", "\(format(cpu / Double(frames) * 1000 * 1000, 1)) ms", "\(format(cpu, 2)) s CPU in all")
        report("hrmd peak RSS", "\(format(Double(usage.ru_maxrss) / 1024, 1)) MB", "goal < 20 MB")
        let count = try ChildProcess(hrmctl, ["samples", "--store", store, "--output", "csv"], outputDirectory: scratch.directory.path)
        _ = try await count.wait(timeout: .seconds(60))
        let stored = max(0, count.standardOutput.split(separator: "\n").count - 1)
        report("heart-rate samples stored", "\(stored)", "of \(frames) notifications")
        print("")
    }
}
