import Foundation
import TestSupport
import Testing

/// Runs the real built `hrmd` and `hrmctl` against a store in a temporary directory.
final class Harness: @unchecked Sendable {
    let directory: TemporaryDirectory
    let store: String
    /// The environment for children: no HRMD_STORE leaking in from the developer's shell.
    let environment: [String: String]

    init() throws {
        directory = try TemporaryDirectory(prefix: "hrmd-e2e")
        store = directory.file("hr.sqlite")
        var environment = ProcessInfo.processInfo.environment
        environment.removeValue(forKey: "HRMD_STORE")
        environment["TZ"] = "UTC"
        self.environment = environment
    }

    func hrmctl(_ arguments: String...) async throws -> CommandResult {
        try await hrmctl(arguments)
    }

    func hrmctl(_ arguments: [String], withStore: Bool = true) async throws -> CommandResult {
        let storeArguments = withStore && needsStore(arguments) ? ["--store", store] : []
        return try await ChildProcess.run(
            BuiltProducts.hrmctl, arguments + storeArguments, environment: environment, in: directory)
    }

    /// Starts hrmd with the harness's store.
    func startDaemon(_ arguments: [String]) throws -> ChildProcess {
        try ChildProcess(BuiltProducts.hrmd, ["--store", store] + arguments, environment: environment, outputDirectory: directory.path)
    }

    /// The stored samples as parsed JSON lines.
    func samples(type: String = "heart-rate") async throws -> [[String: Any]] {
        let result = try await hrmctl(["samples", "--type", type, "--output", "json"])
        guard result.exitCode == 0 else { return [] }
        return result.stdout.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
    }

    private func needsStore(_ arguments: [String]) -> Bool {
        guard let command = arguments.first else { return false }
        return ["auth", "samples"].contains(command) && !arguments.contains("--store")
    }
}

/// What hrmd's ingest said at one periodic flush, read from its debug line ("flushed: N
/// frames, N samples stored, N already stored, N not authorized, …"): the positive event a
/// "nothing was stored" check waits for, since it proves that samples reached the store's
/// authorization and write in the meantime.
struct FlushReport {
    /// Samples refused so far for want of share authorization.
    var denied: Int
    /// Samples the flush could not write and keeps for the next.
    var kept: Int

    /// Every flush `log` (hrmd's standard error, at `--log-level debug`) reports, in order.
    static func all(in log: String) -> [FlushReport] {
        log.split(separator: "\n").compactMap { line in
            guard let range = line.range(of: "flushed: ") else { return nil }
            var counts: [Substring: Int] = [:]
            for part in line[range.upperBound...].split(separator: ",") {
                let words = part.split(separator: " ", maxSplits: 1)
                if words.count == 2, let number = Int(words[0]) { counts[words[1]] = number }
            }
            guard let denied = counts["not authorized"] else { return nil }
            return FlushReport(denied: denied, kept: counts["kept for the next write"] ?? 0)
        }
    }
}

extension ChildProcess {
    /// The flushes this hrmd has reported so far (it must run at `--log-level debug`).
    var flushes: [FlushReport] { FlushReport.all(in: standardError) }

    /// Waits until this hrmd has reported `count` more flushes than `earlier`, each after the one
    /// before: the positive event a check that nothing happened waits for.
    func waitForFlushes(_ count: Int, after earlier: [FlushReport], _ what: String) async throws {
        try await eventually("\(count) flush(es) after \(what)") { flushes.count >= earlier.count + count }
    }
}
