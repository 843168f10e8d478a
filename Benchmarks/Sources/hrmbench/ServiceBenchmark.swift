@preconcurrency import Glibc
import HealthRequests
import Foundation
import HealthModel
import HealthStore
import HealthWire
import SDBus
import Synchronization
import TestSupport
import Timestamps

/// The store service, `hrmd --serve` on a private bus, next to its peers in the same run:
/// `hrmctl samples` and `hrmctl stats` through the service against `--store` on the same
/// file; QuerySamples round trips from one and from 20 connections against the same query
/// in process; and ingestion CPU with 20 observers against none.
///
/// Sizes from the environment: HRMBENCH_SERVICE_DAYS (the store, 1 Hz heart rate; default
/// 365), HRMBENCH_SERVICE_RUNS (hrmctl runs per figure, default 7), HRMBENCH_SERVICE_CALLS
/// (small QuerySamples calls per figure, default 2000; one-hour calls are a tenth of that)
/// and HRMBENCH_SERVICE_SECONDS (each ingestion run, default 30).
struct ServiceBenchmark {
    let scratch: BenchScratch
    /// The year benchmark's store when it ran before in this run: reused for 365 days.
    let yearStore: String?

    let days: Int
    let runs: Int
    let calls: Int
    let ingestSeconds: Int
    let clients = 20
    let straps = 20
    let hz = 4
    /// The application name the benchmark's clients call as (source root/hrmbench).
    let app = "hrmbench"

    init(scratch: BenchScratch, yearStore: String?) {
        self.scratch = scratch
        self.yearStore = yearStore
        days = Self.setting("HRMBENCH_SERVICE_DAYS", default: 365)
        runs = Self.setting("HRMBENCH_SERVICE_RUNS", default: 7)
        calls = Self.setting("HRMBENCH_SERVICE_CALLS", default: 2000)
        ingestSeconds = Self.setting("HRMBENCH_SERVICE_SECONDS", default: 30)
    }

    private static func setting(_ name: String, default value: Int) -> Int {
        guard let text = ProcessInfo.processInfo.environment[name], let number = Int(text), number >= 1 else { return value }
        return number
    }

    private var count: Int { days * 86_400 }

    func run() async throws {
        print("service: hrmd --serve on a private bus; a store of \(days) days of 1 Hz heart rate (\(count) samples; HRMBENCH_SERVICE_DAYS=\(days))")
        do {
            try await queries()
        } catch {
            report("service queries", "failed", "\(error)")
        }
        do {
            try await ingestion()
        } catch {
            report("service ingestion", "failed", "\(error)")
        }
        print("")
    }

    // MARK: - Queries

    /// A QuerySamples shape: its range, its limit and how many samples it returns.
    private struct QueryShape: Sendable {
        var name: String
        var since: Int64
        var until: Int64
        var limit: Int
        var expected: Int
    }

    private func queries() async throws {
        let directory = try TemporaryDirectory(prefix: "hrmbench-service")
        let path: String
        if let yearStore, days == 365 {
            path = yearStore
            report("store", "the year benchmark's", "\(count) samples")
        } else {
            path = directory.file("service.sqlite")
            let build = try YearBenchmark.buildStore(path: path, count: count, csv: nil)
            report("bulk save of the store through the store API", "\(format(build)) s", "\(count) samples")
        }
        let start = YearBenchmark.start.microsecondsSinceEpoch
        let hourStart = start + Int64(days * 200 / 365 * 86_400 + 13 * 3600) * 1_000_000
        let hourEnd = hourStart + 3_600_000_000
        let storeEnd = start + Int64(count) * 1_000_000

        let bus = try await PrivateBus()
        defer { bus.stop() }
        // A serial sensor on a missing tty: hrmd needs a sensor, this one stays quiet (retried with backoff).
        guard let daemon = try await startServing(
            store: path, sensors: ["serial:\(directory.file("no-such-tty"))"], bus: bus, in: directory, bound: 3600)
        else { return }
        defer { if daemon.isRunning { daemon.send(SIGKILL) } }

        // 1, 2: hrmctl through the service against --store on the same file.
        let service = try await hrmctlTalksToService(in: directory)
        let hour = ["samples", "--since", RFC3339.string(from: Timestamp(microsecondsSinceEpoch: hourStart)),
                    "--until", RFC3339.string(from: Timestamp(microsecondsSinceEpoch: hourEnd)), "--output", "json"]
        try await compareHrmctl(
            "hrmctl samples 1 h", hour, service: service, store: path, bus: bus, in: directory, goal: "goal ≤ 50 ms through the service",
            ratioGoal: nil)
        try await compareHrmctl(
            "hrmctl stats --by 1d", ["stats", "--by", "1d", "--output", "json"], service: service, store: path, bus: bus,
            in: directory, goal: nil, ratioGoal: "goal ≤ 1.2×")

        // 3: QuerySamples round trips against the same query in process.
        let store = try HealthStore.open(path: path, mode: .existingOnly)
        let shapes = [
            QueryShape(name: "10 of last minute", since: storeEnd - 60_000_000, until: storeEnd, limit: 10, expected: 10),
            QueryShape(name: "1 h (3600)", since: hourStart, until: hourEnd, limit: 0, expected: 3600),
        ]
        let single = try DBusConnection.connect(address: bus.address)
        defer { single.close() }
        var many: [DBusConnection] = []
        defer { many.forEach { $0.close() } }
        for _ in 0..<clients { many.append(try DBusConnection.connect(address: bus.address)) }
        for (index, shape) in shapes.enumerated() {
            let total = index == 0 ? calls : max(clients, calls / 10)
            let perClient = max(1, total / clients)
            let cpuBefore = Self.cpuSeconds(of: daemon.pid) ?? 0
            guard let one = try await roundTrips(shape, connections: [single], callsEach: total) else { return }
            let cpuBetween = Self.cpuSeconds(of: daemon.pid) ?? 0
            guard let twenty = try await roundTrips(shape, connections: many, callsEach: perClient) else { return }
            let cpuAfter = Self.cpuSeconds(of: daemon.pid) ?? 0
            let peerOne = try inProcess(shape, store: store, tasks: 1, callsEach: total)
            let peerTwenty = try await inProcessConcurrently(shape, store: store, tasks: clients, callsEach: perClient)
            let perCallOne = (cpuBetween - cpuBefore) / Double(total) * 1000
            let perCallTwenty = (cpuAfter - cpuBetween) / Double(perClient * clients) * 1000
            report("QuerySamples \(shape.name), 1 connection", "\(format(one, 0)) calls/s", "\(total) calls, replies decoded; hrmd CPU \(format(perCallOne, 2)) ms/call")
            report("peer: in process, 1 task", "\(format(peerOne, 0)) calls/s", "HealthStore.samples, same query")
            report("QuerySamples \(shape.name), \(clients) connections", "\(format(twenty, 0)) calls/s",
                   "\(perClient * clients) calls in all; hrmd CPU \(format(perCallTwenty, 2)) ms/call")
            report("peer: in process, \(clients) tasks", "\(format(peerTwenty, 0)) calls/s")
            report("ratio bus / in process (1, \(clients))", "\(format(one / peerOne, 3)), \(format(twenty / peerTwenty, 3))")
        }
        if let decode = try await clientDecoding(shapes[1], connection: single) {
            report("client: decoding one 1 h reply into records", "\(format(decode * 1000, 1)) ms", "best of 5, part of each call above")
        }

        daemon.send(SIGTERM)
        _ = try? await daemon.wait(timeout: .seconds(30))
    }

    /// Runs `arguments` of hrmctl `runs` times through the service and with `--store`,
    /// alternating which goes first, and reports the medians side by side.
    private func compareHrmctl(
        _ name: String, _ arguments: [String], service: Bool, store: String, bus: PrivateBus, in directory: TemporaryDirectory,
        goal: String?, ratioGoal: String?
    ) async throws {
        var serviceEnvironment = ProcessInfo.processInfo.environment
        serviceEnvironment["DBUS_SYSTEM_BUS_ADDRESS"] = bus.address
        serviceEnvironment.removeValue(forKey: "HRMD_STORE")
        var fileEnvironment = serviceEnvironment
        fileEnvironment.removeValue(forKey: "DBUS_SYSTEM_BUS_ADDRESS")
        var throughService: [Double] = []
        var onFile: [Double] = []
        var serviceOutput = ""
        var fileOutput = ""
        for round in 0..<runs {
            for viaService in round % 2 == 0 ? [true, false] : [false, true] {
                if viaService && !service { continue }
                let run = try await timed(
                    viaService ? arguments : arguments + ["--store", store], viaService ? serviceEnvironment : fileEnvironment, in: directory)
                guard let run else { return }
                if viaService {
                    throughService.append(run.seconds)
                    serviceOutput = run.output
                } else {
                    onFile.append(run.seconds)
                    fileOutput = run.output
                }
            }
        }
        let lines = fileOutput.split(separator: "\n").count
        if service {
            let same = serviceOutput == fileOutput ? "same output" : "OUTPUT DIFFERS (\(serviceOutput.split(separator: "\n").count) lines)"
            report("\(name), through the service", "\(format(median(throughService) * 1000, 1)) ms",
                   "median of \(runs), process included; \(same)" + (goal.map { "; \($0)" } ?? ""))
        } else {
            report("\(name), through the service", "skipped: hrmctl does not talk to the service yet")
        }
        report("peer: \(name), --store same file", "\(format(median(onFile) * 1000, 1)) ms", "median of \(runs), \(lines) lines")
        if service {
            report("ratio service / file", "\(format(median(throughService) / median(onFile), 2))×", ratioGoal ?? "")
        }
    }

    /// Whether this hrmctl reads through the service when no store is named: its help says so.
    private func hrmctlTalksToService(in directory: TemporaryDirectory) async throws -> Bool {
        for arguments in [["--help"], ["samples", "--help"]] {
            let result = try await ChildProcess.run(BuiltProducts.hrmctl, arguments, in: directory, timeout: .seconds(30))
            let text = (result.stdout + result.stderr).lowercased()
            if text.contains("service") || text.contains(HealthBus.name.lowercased()) { return true }
        }
        return false
    }

    private func timed(_ arguments: [String], _ environment: [String: String], in directory: TemporaryDirectory) async throws
        -> (seconds: Double, output: String)?
    {
        let begin = ContinuousClock.now
        let child = try ChildProcess(BuiltProducts.hrmctl, arguments, environment: environment, outputDirectory: directory.path)
        let termination = try await child.wait(timeout: .seconds(300))
        let elapsed = seconds(ContinuousClock.now - begin)
        guard termination == .exited(0) else {
            report("hrmctl \(arguments.joined(separator: " "))", "failed", "\(termination): \(child.standardError.suffix(300))")
            return nil
        }
        let output = child.standardOutput
        try? FileManager.default.removeItem(atPath: child.stdoutPath)
        try? FileManager.default.removeItem(atPath: child.stderrPath)
        return (elapsed, output)
    }

    /// QuerySamples calls per second: each connection makes `callsEach` calls in turn, all
    /// connections at once; each reply is decoded into records, as a client would.
    private func roundTrips(_ shape: QueryShape, connections: [DBusConnection], callsEach: Int) async throws -> Double? {
        let app = app
        let begin = ContinuousClock.now
        let wrong = try await withThrowingTaskGroup(of: Int?.self) { group in
            for connection in connections {
                group.addTask {
                    for _ in 0..<callsEach {
                        let reply = try await connection.call(
                            destination: HealthBus.name, path: HealthBus.path, interface: HealthBus.interface, member: "QuerySamples",
                            arguments: [.string(app), .string("heart-rate"), .int64(shape.since), .int64(shape.until), .uint32(UInt32(shape.limit))],
                            timeout: .seconds(60))
                        let records = try (reply.first?.elements ?? []).map { try SampleRecord(wire: $0) }
                        if records.count != shape.expected { return records.count }
                    }
                    return nil
                }
            }
            var wrong: Int?
            for try await result in group where result != nil { wrong = result }
            return wrong
        }
        let elapsed = seconds(ContinuousClock.now - begin)
        if let wrong {
            report("QuerySamples \(shape.name)", "failed", "\(wrong) samples, expected \(shape.expected)")
            return nil
        }
        return Double(callsEach * connections.count) / elapsed
    }

    /// The time a client takes to decode one reply of `shape` into records.
    private func clientDecoding(_ shape: QueryShape, connection: DBusConnection) async throws -> Double? {
        let reply = try await connection.call(
            destination: HealthBus.name, path: HealthBus.path, interface: HealthBus.interface, member: "QuerySamples",
            arguments: [.string(app), .string("heart-rate"), .int64(shape.since), .int64(shape.until), .uint32(UInt32(shape.limit))],
            timeout: .seconds(60))
        guard let elements = reply.first?.elements else { return nil }
        var best = Double.infinity
        for _ in 0..<5 { best = min(best, try measure { _ = try elements.map { try SampleRecord(wire: $0) } }) }
        return best
    }

    private func sampleQuery(_ shape: QueryShape) -> SampleQuery {
        SampleQuery(
            type: .heartRate, since: Timestamp(microsecondsSinceEpoch: shape.since), until: Timestamp(microsecondsSinceEpoch: shape.until),
            limit: shape.limit == 0 ? nil : shape.limit)
    }

    private func inProcess(_ shape: QueryShape, store: HealthStore, tasks: Int, callsEach: Int) throws -> Double {
        let query = sampleQuery(shape)
        let elapsed = try measure {
            for _ in 0..<callsEach { guard try store.samples(query).count == shape.expected else { throw QueryMismatch(shape: shape.name) } }
        }
        return Double(callsEach) / elapsed
    }

    private func inProcessConcurrently(_ shape: QueryShape, store: HealthStore, tasks: Int, callsEach: Int) async throws -> Double {
        let query = sampleQuery(shape)
        let begin = ContinuousClock.now
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<tasks {
                group.addTask {
                    for _ in 0..<callsEach { guard try store.samples(query).count == shape.expected else { throw QueryMismatch(shape: shape.name) } }
                }
            }
            try await group.waitForAll()
        }
        return Double(tasks * callsEach) / seconds(ContinuousClock.now - begin)
    }

    // MARK: - Ingestion with observers

    /// What one ingestion run of hrmd --serve cost and what its observers heard.
    private struct IngestRun {
        var frames: Int
        /// Samples hrmd said it stored (every type), and those it could not.
        var stored: Int
        var denied: Int
        var skipped: Int
        /// Samples in the store after hrmd stopped: every type, heart rate.
        var inStore: Int
        var heartRate: Int
        var cpuSeconds: Double
        var observers: [ObserverResult]
        /// Per observer: the heart-rate samples in the store between its first and last anchor.
        var expectedFollowed: [Int]
    }

    private func ingestion() async throws {
        let observed = "\(clients) observers"
        guard let quiet = try await ingest(observers: 0, following: false),
              let signalsOnly = try await ingest(observers: clients, following: false),
              let busy = try await ingest(observers: clients, following: true)
        else { return }
        let perThousand = { (run: IngestRun) in run.cpuSeconds / Double(max(run.frames, 1)) * 1e6 }
        report("hrmd --serve, \(straps) straps × \(hz) Hz, \(ingestSeconds) s: frames", "\(quiet.frames) / \(busy.frames)",
               "no client / \(observed); heart rate \(quiet.heartRate) / \(busy.heartRate); each run \(ingestSeconds) s from hrmd's start")
        report("hrmd CPU per 1000 frames, no client", "\(format(perThousand(quiet), 1)) ms", "\(format(quiet.cpuSeconds, 2)) s CPU, /proc/PID/stat")
        report("hrmd CPU per 1000 frames, \(observed)", "\(format(perThousand(busy), 1)) ms", "\(format(busy.cpuSeconds, 2)) s CPU")
        report("ratio \(observed) / no client", "\(format(perThousand(busy) / perThousand(quiet), 3))×", "goal ≤ 1.10×")
        report("  with observers that only count signals", "\(format(perThousand(signalsOnly), 1)) ms",
               "\(format(perThousand(signalsOnly) / perThousand(quiet), 3))× no client: SamplesChanged without Changes calls")
        for (name, run) in [("no client", quiet), ("signals only", signalsOnly), (observed, busy)] {
            let verdict = run.stored == run.inStore && run.denied == 0 && run.skipped == 0
                ? "every accepted frame stored" : "MISSING \(run.stored - run.inStore)"
            report("samples stored (log) / in store, \(name)", "\(run.stored) / \(run.inStore)",
                   "\(run.denied) not authorized, \(run.skipped) skipped; \(verdict)")
        }
        let signals = busy.observers.map(\.signals)
        let signalsAlone = signalsOnly.observers.map(\.signals)
        report("SamplesChanged per observer", "\(signals.min() ?? 0)–\(signals.max() ?? 0)",
               "min–max of \(busy.observers.count); \(signalsAlone.min() ?? 0)–\(signalsAlone.max() ?? 0) when only counting")
        let followed = busy.observers.map(\.followed)
        let complete = zip(busy.observers, busy.expectedFollowed).filter { $0.followed == $1 }.count
        report("samples followed with Changes per observer", "\(followed.min() ?? 0)–\(followed.max() ?? 0)",
               "\(complete) of \(busy.observers.count) got every sample up to their last anchor")
        let failures = (signalsOnly.observers + busy.observers).compactMap(\.failure)
        if let first = failures.first { report("observer failures", "\(failures.count)", first) }
    }

    /// One run of hrmd --serve with `count` observers; `following`: they call Changes on each signal.
    private func ingest(observers count: Int, following follows: Bool) async throws -> IngestRun? {
        let directory = try TemporaryDirectory(prefix: "hrmbench-ingest")
        let path = directory.file("ingest.sqlite")
        guard try await grantHRMD(store: path, in: directory.path, for: "hrmd --serve") else { return nil }
        let bus = try await PrivateBus()
        defer { bus.stop() }
        let sensors = (1...straps).map { "mock:hz=\(hz),id=m\($0),seed=\($0),contact-loss=0" }
        let started = ContinuousClock.now
        guard let daemon = try await startServing(store: path, sensors: sensors, bus: bus, in: directory, bound: ingestSeconds + 60) else {
            return nil
        }
        defer { if daemon.isRunning { daemon.send(SIGKILL) } }

        var observers: [Observer] = []
        for index in 0..<count { observers.append(try await Observer(address: bus.address, app: "observer\(index)")) }
        let following = observers.map { observer in Task { await observer.follow(callingChanges: follows) } }
        try await Task.sleep(until: started.advanced(by: .seconds(ingestSeconds)))
        guard let cpu = Self.cpuSeconds(of: daemon.pid) else {
            following.forEach { $0.cancel() }
            report("hrmd --serve", "failed", "it stopped early: \(daemon.standardError.suffix(300))")
            return nil
        }
        following.forEach { $0.cancel() }
        var results: [ObserverResult] = []
        for task in following { results.append(await task.value) }
        observers.forEach { $0.close() }

        daemon.send(SIGTERM)
        let termination = try await daemon.wait(timeout: .seconds(30))
        guard termination == .exited(0) else {
            report("hrmd --serve", "failed", "\(termination): \(daemon.standardError.suffix(300))")
            return nil
        }
        // The last log line: "ingest stopped: N frames, M samples stored, U already stored, D not authorized, S skipped".
        let log = daemon.standardError
        let store = try HealthStore.open(path: path, mode: .existingOnly)
        var expected: [Int] = []
        for result in results {
            let added = try store.changes(of: .heartRate, since: result.firstAnchor, limit: 10_000_000).added
            expected.append(added.filter { $0.id <= result.lastAnchor }.count)
        }
        var inStore = 0
        for type in SampleType.all { inStore += try store.sampleCount(of: type) }
        return IngestRun(
            frames: number(before: " frames", in: log), stored: number(before: " samples stored", in: log),
            denied: number(before: " not authorized", in: log), skipped: number(before: " skipped", in: log),
            inStore: inStore, heartRate: try store.sampleCount(of: .heartRate), cpuSeconds: cpu,
            observers: results, expectedFollowed: expected)
    }

    /// utime + stime of a running process from /proc/PID/stat, in seconds; nil once it ended.
    static func cpuSeconds(of pid: pid_t) -> Double? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = text.lastIndex(of: ")")
        else { return nil }
        // After "pid (comm)": state is field 3, utime 14, stime 15.
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count > 12, fields[0] != "Z", let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    // MARK: - hrmd --serve

    /// Starts `hrmd --serve` on `bus` (ending by itself after `bound` seconds) and waits until
    /// it owns org.hrmd.Health; nil, reported, when it does not within 30 s.
    private func startServing(store: String, sensors: [String], bus: PrivateBus, in directory: TemporaryDirectory, bound: Int) async throws
        -> ChildProcess?
    {
        let configuration = directory.file("hrmd.conf")
        try "[hrmd]\n".write(toFile: configuration, atomically: true, encoding: .utf8)
        var environment = ProcessInfo.processInfo.environment
        environment["DBUS_SYSTEM_BUS_ADDRESS"] = bus.address
        environment.removeValue(forKey: "HRMD_STORE")
        let arguments = ["--serve", "--config", configuration, "--store", store, "--duration", "\(bound)", "--log-level", "info"]
            + sensors.flatMap { ["--sensor", $0] }
        let daemon = try ChildProcess(BuiltProducts.hrmd, arguments, environment: environment, outputDirectory: directory.path)
        let probe = try DBusConnection.connect(address: bus.address)
        defer { probe.close() }
        let deadline = ContinuousClock.now.advanced(by: .seconds(30))
        while ContinuousClock.now < deadline && daemon.isRunning {
            let reply = try await probe.call(
                destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                member: "NameHasOwner", arguments: [.string(HealthBus.name)])
            if reply.first?.bool == true { return daemon }
            try await Task.sleep(for: .milliseconds(50))
        }
        if daemon.isRunning { daemon.send(SIGKILL) }
        _ = try? await daemon.wait(timeout: .seconds(10))
        report("hrmd --serve", "failed", "did not own \(HealthBus.name) within 30 s: \(daemon.standardError.suffix(300))")
        return nil
    }
}

/// What one observer heard.
private struct ObserverResult: Sendable {
    var signals = 0
    var followed = 0
    var firstAnchor: Int64 = 0
    var lastAnchor: Int64 = 0
    var failure: String?
}

/// A client of its own connection that observes heart rate and, on each SamplesChanged,
/// follows with Changes from its last anchor, as an application would.
private final class Observer: Sendable {
    let connection: DBusConnection
    let app: String
    let stream: AsyncStream<DBusSignal>
    let firstAnchor: Int64

    init(address: String, app: String) async throws {
        connection = try DBusConnection.connect(address: address)
        self.app = app
        stream = try await connection.signals(matching: DBusMatchRule(path: HealthBus.path, interface: HealthBus.interface, member: "SamplesChanged"))
        let anchor = try await connection.call(
            destination: HealthBus.name, path: HealthBus.path, interface: HealthBus.interface, member: "CurrentAnchor")
        firstAnchor = anchor.first?.integer ?? 0
        _ = try await call("Observe", [.string(app), .string("heart-rate")])
    }

    private func call(_ member: String, _ arguments: [DBusValue]) async throws -> [DBusValue] {
        try await connection.call(destination: HealthBus.name, path: HealthBus.path, interface: HealthBus.interface, member: member, arguments: arguments)
    }

    /// Counts signals and (`callingChanges`) the samples Changes returns until the task is cancelled.
    func follow(callingChanges: Bool) async -> ObserverResult {
        var result = ObserverResult(firstAnchor: firstAnchor, lastAnchor: firstAnchor)
        for await signal in stream where signal.member == "SamplesChanged" {
            result.signals += 1
            guard callingChanges else { continue }
            do {
                while !Task.isCancelled {
                    let reply = try await call("Changes", [.string(app), .string("heart-rate"), .uint64(UInt64(result.lastAnchor)), .uint32(0)])
                    guard reply.count == 3, let added = reply[0].elements, let deleted = reply[1].elements, let anchor = reply[2].integer else {
                        result.failure = "unexpected Changes reply"
                        return result
                    }
                    result.followed += added.count
                    result.lastAnchor = anchor
                    if added.count + deleted.count < HealthBusLimits.samplesPerQuery { break }
                }
            } catch {
                if !Task.isCancelled { result.failure = "\(error)" }
                return result
            }
        }
        return result
    }

    func close() { connection.close() }
}

private struct QueryMismatch: Error, CustomStringConvertible {
    var shape: String
    var description: String { "the in-process query \(shape) returned another count" }
}
