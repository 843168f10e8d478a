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
