@preconcurrency import Glibc
import Foundation
import Synchronization
import TestSupport

/// A command line timed as a whole process (start-up included), its standard output sent to
/// /dev/null as `> /dev/null` would.
struct BenchCommand {
    var executable: String
    var arguments: [String]
    /// The environment (nil: this process's); the store benchmarks run everything in UTC.
    var environment: [String: String]? = BenchCommand.utc

    /// This process's environment with TZ=UTC.
    static let utc: [String: String] = {
        var environment = ProcessInfo.processInfo.environment
        environment["TZ"] = "UTC"
        return environment
    }()

    /// The wall time of one run, from just before the spawn to the moment the kernel reports
    /// the exit (waitid, not a polling loop); nil, with a one-line report under `name`, when
    /// the command fails or outlives `timeout` (it is then killed).
    func wallSeconds(name: String, in scratch: BenchScratch, timeout: Duration) async throws -> Double? {
        let begin = ContinuousClock.now
        let child: ChildProcess
        do {
            child = try ChildProcess(
                executable, arguments, environment: environment, outputDirectory: scratch.directory.path, stdoutPath: "/dev/null")
        } catch {
            report(name, "failed", "cannot start \(executable): \(error)")
            return nil
        }
        let end = Self.exitInstant(of: child, timeout: timeout)
        let termination = try await child.wait(timeout: .seconds(10))
        guard termination == .exited(0) else {
            report(name, "failed", "\(termination): \(child.standardError.split(separator: "\n").last ?? "")")
            return nil
        }
        return seconds(end - begin)
    }

    /// Blocks until `child` has exited, leaving it unreaped (so its pid cannot be reused while
    /// the watchdog may still kill it); past `timeout` the watchdog kills it.
    private static func exitInstant(of child: ChildProcess, timeout: Duration) -> ContinuousClock.Instant {
        let exited = Mutex(false)
        let watchdog = DispatchWorkItem {
            exited.withLock { seen in if !seen { child.send(SIGKILL) } }
        }
        DispatchQueue.global().asyncAfter(deadline: .now() + seconds(timeout), execute: watchdog)
        var info = siginfo_t()
        while waitid(P_PID, id_t(child.pid), &info, WEXITED | WNOWAIT) == -1 && errno == EINTR {}
        let end = ContinuousClock.now
        exited.withLock { $0 = true }
        watchdog.cancel()
        return end
    }
}

/// Two whole commands run in turn, A B A B …, after a warm-up run of each: the median time
/// of each and the median of the pair-by-pair ratios A/B, so that a drift in the machine's
/// speed during the runs moves both sides of each pair alike.
struct PairedTiming {
    var medianA: Double
    var medianB: Double
    var medianRatio: Double
    var pairs: Int

    /// Nil (reported) when either command fails.
    static func measure(
        _ a: BenchCommand, named nameA: String, against b: BenchCommand, named nameB: String,
        pairs: Int, in scratch: BenchScratch, timeout: Duration = .seconds(600)
    ) async throws -> PairedTiming? {
        var timesA: [Double] = [], timesB: [Double] = []
        for round in 0...pairs {
            guard let timeA = try await a.wallSeconds(name: nameA, in: scratch, timeout: timeout),
                let timeB = try await b.wallSeconds(name: nameB, in: scratch, timeout: timeout)
            else { return nil }
            if round > 0 {
                timesA.append(timeA)
                timesB.append(timeB)
            }
        }
        let ratios = zip(timesA, timesB).map { $0 / $1 }
        return PairedTiming(medianA: median(timesA), medianB: median(timesB), medianRatio: median(ratios), pairs: pairs)
    }

    /// Three lines: A, its peer B, and the ratio with its goal.
    func reportFigures(_ nameA: String, peer nameB: String, ratio ratioName: String, goal: String) {
        report(nameA, duration(medianA), "process included; median of \(pairs) A/B pairs")
        report(nameB, duration(medianB))
        report(ratioName, "\(format(medianRatio))×", "median of pair ratios; \(goal)")
    }
}

/// The median of the runs of a command timed alone (when its peer is timed elsewhere, such
/// as inside Python); nil when a run fails.
func medianWallSeconds(_ command: BenchCommand, name: String, runs: Int, in scratch: BenchScratch) async throws -> Double? {
    var times: [Double] = []
    for round in 0...runs {
        guard let time = try await command.wallSeconds(name: name, in: scratch, timeout: .seconds(600)) else { return nil }
        if round > 0 { times.append(time) }
    }
    return median(times)
}

/// Seconds in ms below 1 s, else in s.
func duration(_ seconds: Double) -> String {
    seconds < 1 ? "\(format(seconds * 1000, seconds < 0.01 ? 2 : 1)) ms" : "\(format(seconds, 2)) s"
}
