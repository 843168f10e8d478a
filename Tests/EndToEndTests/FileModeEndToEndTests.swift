@preconcurrency import Glibc
import Foundation
import TestSupport
import Testing

/// Every file the programs create that holds health data or secrets is its owner's alone,
/// whatever the umask they were started with (here the common 022).
@Suite("Files private on every path that creates them", .timeLimit(.minutes(HangBound.suiteMinutes)))
struct FileModeEndToEndTests {
    /// Runs `executable` under umask 022 to its end.
    private func runUnderUmask022(_ harness: Harness, _ executable: String, _ arguments: [String]) async throws -> CommandResult {
        try await ChildProcess.run(
            "/bin/sh", ["-c", #"umask 022; exec "$0" "$@""#, executable] + arguments, environment: harness.environment,
            in: harness.directory)
    }

    /// The files in `paths` (those that exist) whose mode lets group or others in, with their modes.
    private func openToOthers(_ paths: [String]) -> [String] {
        paths.compactMap { path in
            var status = stat()
            guard stat(path, &status) == 0 else { return nil }
            return status.st_mode & 0o077 == 0 ? nil : "\(path): \(String(status.st_mode & 0o777, radix: 8))"
        }
    }

    @Test("a store hrmctl creates (making a token), and hrmd's store, WAL and traces with the HTTP front on")
    func privateModes() async throws {
        let harness = try Harness()
        let tokenStore = harness.directory.file("tokens.sqlite")
        let token = try await runUnderUmask022(harness, BuiltProducts.hrmctl, ["auth", "token", "create", "mary/tv", "--store", tokenStore])
        #expect(token.exitCode == 0, "\(token.stderr)")
        #expect(openToOthers([tokenStore, tokenStore + "-wal", tokenStore + "-shm"]) == [])

        let traces = harness.directory.file("traces")
        try FileManager.default.createDirectory(atPath: traces, withIntermediateDirectories: false)
        let store = harness.directory.file("daemon.sqlite")
        let daemon = try await runUnderUmask022(
            harness, BuiltProducts.hrmd,
            ["--store", store, "--http", "127.0.0.1:0", "--record", traces, "--sensor", "mock:hz=20", "--duration", "1"])
        #expect(daemon.exitCode == 0, "\(daemon.stderr)")
        let recorded = try FileManager.default.contentsOfDirectory(atPath: traces).map { traces + "/" + $0 }
        #expect(!recorded.isEmpty, "no trace was written")
        #expect(openToOthers([store, store + "-wal", store + "-shm"] + recorded) == [])
    }
}
