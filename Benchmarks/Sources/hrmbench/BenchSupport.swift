import Foundation
import HealthModel
import HealthStore
import SensorSimulator
import TestSupport

/// A scratch directory for one benchmark run.
struct BenchScratch {
    let directory: TemporaryDirectory
    init() throws { directory = try TemporaryDirectory(prefix: "hrmbench") }
    func file(_ name: String) -> String { directory.file(name) }

    /// Starts `python3 script arguments…` (/usr/bin/python3, else the one on PATH), its output
    /// kept in this directory.
    func python(_ script: String, _ arguments: [String]) throws -> ChildProcess {
        if FileManager.default.isExecutableFile(atPath: "/usr/bin/python3") {
            return try ChildProcess("/usr/bin/python3", [script] + arguments, outputDirectory: directory.path)
        }
        return try ChildProcess("/usr/bin/env", ["python3", script] + arguments, outputDirectory: directory.path)
    }
}

/// Where this package's own programs are (stack-floor): beside the running hrmbench. hrmd and
/// hrmctl are the root package's, found through `BuiltProducts` (`HRMD_BIN_DIR`).
enum BenchProducts {
    static var directory: String {
        let executable = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        return (executable as NSString).deletingLastPathComponent
    }

    static func path(of product: String) -> String { "\(directory)/\(product)" }
}

/// Times `body` on the continuous clock, in seconds.
func measure(_ body: () throws -> Void) rethrows -> Double {
    let start = ContinuousClock.now
    try body()
    let elapsed = ContinuousClock.now - start
    return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
}

func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
}

func cpuSeconds(_ usage: rusage) -> Double {
    Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6
        + Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
}

/// Prints one figure line.
func report(_ name: String, _ value: String, _ note: String = "") {
    let padded = name.padding(toLength: 46, withPad: " ", startingAt: 0)
    print("  \(padded) \(value)\(note.isEmpty ? "" : "   (\(note))")")
}

func format(_ value: Double, _ digits: Int = 2) -> String { String(format: "%.\(digits)f", value) }

/// The median (of an even count, the mean of the middle two); NaN when there is none.
func median(_ values: [Double]) -> Double {
    guard !values.isEmpty else { return .nan }
    let sorted = values.sorted()
    let middle = sorted.count / 2
    return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
}

/// A deterministic generator for benchmark data.
struct BenchRandom {
    private var generator: SeededGenerator
    init(state: UInt64) { generator = SeededGenerator(seed: state) }
    mutating func next(in range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &generator) }
}

/// The most memory a running child held, from /proc/PID/status, in kB.
struct MemoryPeak {
    /// VmHWM: the peak resident set.
    var peakKB = 0
    /// RssAnon at its highest: heap and stacks.
    var anonymousKB = 0
    /// RssFile at its highest: code and read-only data.
    var fileBackedKB = 0

    /// Samples the child's /proc status every 250 ms until it ends. (The rusage of a child
    /// started with posix_spawn also counts the parent's memory from before the exec.)
    static func watch(_ child: ChildProcess) async throws -> MemoryPeak {
        var peak = MemoryPeak()
        while child.isRunning {
            peak.sample(child.pid)
            try await Task.sleep(for: .milliseconds(250))
        }
        return peak
    }

    /// Takes in the process's figures now.
    mutating func sample(_ pid: pid_t) {
        let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        peakKB = max(peakKB, Self.kilobytes("VmHWM:", in: status))
        anonymousKB = max(anonymousKB, Self.kilobytes("RssAnon:", in: status))
        fileBackedKB = max(fileBackedKB, Self.kilobytes("RssFile:", in: status))
    }

    /// A `Key:   123 kB` figure of /proc/PID/status, in kB (0 when absent).
    private static func kilobytes(_ key: String, in status: String) -> Int {
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix(key) }) else { return 0 }
        return Int(line.dropFirst(key.count).split(whereSeparator: \.isWhitespace).first ?? "") ?? 0
    }
}

/// The integer just before the last occurrence of `suffix` in `text` (0 when absent), such as
/// the count in hrmd's last log line "ingest stopped: N frames, M samples stored, …".
func number(before suffix: String, in text: String) -> Int {
    guard let range = text.range(of: suffix, options: .backwards) else { return 0 }
    let digits = text[..<range.lowerBound].reversed().prefix(while: \.isNumber)
    return Int(String(digits.reversed())) ?? 0
}

/// Lets hrmd share every type in `store` (`hrmctl auth grant hrmd all`); reports and returns
/// false when that fails, so the benchmark named `what` is skipped.
func grantHRMD(store: String, in directory: String, for what: String) async throws -> Bool {
    let grant = try ChildProcess(BuiltProducts.hrmctl, ["auth", "grant", "hrmd", "all", "--store", store], outputDirectory: directory)
    guard try await grant.wait(timeout: .seconds(30)) == .exited(0) else {
        report(what, "not measured", "hrmctl auth grant failed: \(grant.standardError)")
        return false
    }
    return true
}

/// What a SQLite file holds once its WAL is checkpointed into it: the bytes of the pages in
/// use ((page_count − freelist_count) × page_size) and the file's size. Read by the sqlite3
/// shell through pragmas only, so it works whatever the file's tables; nil (reported under
/// `name`) when that fails. Close the file's writers first.
func storedBytes(_ path: String, name: String, in scratch: BenchScratch) async throws -> (inUse: Int, file: Int)? {
    let sql = """
        PRAGMA wal_checkpoint(TRUNCATE);
        SELECT (page_count - freelist_count) * page_size FROM pragma_page_count(), pragma_freelist_count(), pragma_page_size();
        """
    let child = try ChildProcess("/usr/bin/sqlite3", [path, sql], outputDirectory: scratch.directory.path)
    let termination = try await child.wait(timeout: .seconds(120))
    guard termination == .exited(0), let last = child.standardOutput.split(separator: "\n").last, let inUse = Int(last),
        let file = try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int
    else {
        report(name, "not measured", "sqlite3: \(termination) \(child.standardError.prefix(200))")
        return nil
    }
    return (inUse, file)
}

/// A daemon run for a while and then stopped the way systemd stops it.
struct StoppedDaemon {
    var termination: ChildProcess.Termination
    var memory: MemoryPeak
    /// write_bytes of /proc/PID/io just before the SIGTERM: what it had made the kernel write
    /// to storage (the page-cache pages it dirtied); nil when it ended before.
    var writtenBytes: Int?

    /// Lets `daemon` run for `duration` (its memory sampled every 250 ms), reads its
    /// write_bytes, sends SIGTERM and waits for it to write what is pending and exit, at most
    /// `stopTimeout` (then it is killed and `TimedOut` thrown).
    static func run(_ daemon: ChildProcess, for duration: Duration, stopTimeout: Duration = .seconds(60)) async throws -> StoppedDaemon {
        var memory = MemoryPeak()
        let stopAt = ContinuousClock.now.advanced(by: duration)
        var written: Int?
        while daemon.isRunning {
            memory.sample(daemon.pid)
            if ContinuousClock.now >= stopAt {
                written = writeBytes(of: daemon.pid)
                daemon.send(SIGTERM)
                break
            }
            try await Task.sleep(for: .milliseconds(250))
        }
        let termination = try await daemon.wait(timeout: stopTimeout)
        return StoppedDaemon(termination: termination, memory: memory, writtenBytes: written)
    }

    private static func writeBytes(of pid: pid_t) -> Int? {
        let io = (try? String(contentsOfFile: "/proc/\(pid)/io", encoding: .utf8)) ?? ""
        guard let line = io.split(separator: "\n").first(where: { $0.hasPrefix("write_bytes:") }) else { return nil }
        return Int(line.dropFirst("write_bytes:".count).trimmingCharacters(in: .whitespaces))
    }
}

/// How many samples of each type a store holds, counted through the store API.
func storedSamples(in path: String) throws -> [SampleType: Int] {
    let store = try HealthStore.open(path: path, mode: .existingOnly)
    var counts: [SampleType: Int] = [:]
    for type in SampleType.all {
        var count = 0
        try store.enumerateSamples(SampleQuery(type: type)) { _ in count += 1 }
        counts[type] = count
    }
    return counts
}
