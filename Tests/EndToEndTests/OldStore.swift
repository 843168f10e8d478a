import Foundation
import TestSupport

/// A store file made by an older hrmd, with the commands whose standard output that version's
/// hrmctl recorded for it (Tests/fixtures/old-stores, made by make-old-stores.sh).
struct OldStore: Sendable, CustomStringConvertible {
    /// One recorded command.
    struct Command: Sendable {
        /// The name of the file that holds its expected output.
        var name: String
        /// hrmctl's arguments; `{store}` stands for the store file.
        var arguments: [String]

        func arguments(store: String) -> [String] { arguments.map { $0 == "{store}" ? store : $0 } }
    }

    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("fixtures/old-stores").path

    /// The version's directory: v1, v4.
    let version: String
    /// The recordings whose every sample the store holds, relative to `root`.
    let traces: [String]
    /// The outputs that today's hrmctl prints otherwise than the old version did, for reasons
    /// that have nothing to do with how samples are stored, each with its reason: they are
    /// expected as the code just before series storage (d8faf63, schema v5) printed them on the
    /// upgraded file (`expected-current/`, recorded by make-old-stores.sh).
    var currentOutputs: [String: String] = [:]
    /// The outputs that series storage changed on purpose, each with its reason: they are
    /// expected as this version prints them (`expected-series/`).
    var seriesOutputs: [String: String] = [:]

    var description: String { version }
    var storeFile: String { "\(Self.root)/\(version)/store.sqlite" }

    /// The commands of the version's `commands` file, in order.
    func commands() throws -> [Command] {
        try String(contentsOfFile: "\(Self.root)/\(version)/commands", encoding: .utf8)
            .split(separator: "\n")
            .filter { !$0.hasPrefix("#") }
            .map { line in
                let words = line.split(separator: " ").map(String.init)
                return Command(name: words[0], arguments: Array(words.dropFirst()))
            }
    }

    /// What the current hrmctl must print: the old version's output, or where that legitimately
    /// differs, the output of the code just before series storage (`expected-current/`), or
    /// where series storage changed it on purpose, this version's (`expected-series/`).
    func expectedOutput(of command: Command) throws -> String {
        let candidates = ["expected-series", "expected-current", "expected"].map { "\(Self.root)/\(version)/\($0)/\(command.name)" }
        let path = candidates.first { FileManager.default.fileExists(atPath: $0) } ?? candidates[2]
        return try String(contentsOfFile: path, encoding: .utf8)
    }

    /// The files in `expected-current/`.
    func currentOutputFiles() -> Set<String> { files(in: "expected-current") }

    /// The files in `expected-series/`.
    func seriesOutputFiles() -> Set<String> { files(in: "expected-series") }

    private func files(in directory: String) -> Set<String> {
        Set((try? FileManager.default.contentsOfDirectory(atPath: "\(Self.root)/\(version)/\(directory)")) ?? [])
    }
}

extension Harness {
    /// Runs one recorded command with the current hrmctl on the harness's store.
    func run(_ command: OldStore.Command) async throws -> CommandResult {
        try await hrmctl(command.arguments(store: store), withStore: false)
    }

    /// Runs the commands, a few at a time (readers of one store, as users and scripts run them),
    /// and returns their results by name.
    func runAll(_ commands: [OldStore.Command], atOnce width: Int = 4) async throws -> [String: CommandResult] {
        try await withThrowingTaskGroup(of: (String, CommandResult).self) { group in
            var results: [String: CommandResult] = [:]
            var pending = commands[...]
            func startNext() {
                guard let command = pending.popFirst() else { return }
                group.addTask { (command.name, try await self.run(command)) }
            }
            for _ in 0..<width { startNext() }
            while let (name, result) = try await group.next() {
                results[name] = result
                startNext()
            }
            return results
        }
    }
}

/// Output that no version prints the same twice: a FHIR Bundle's creation time and the
/// random UUIDs of its entries' fullUrl. Everything else is compared byte for byte.
enum UnrepeatableOutput {
    static func masked(_ output: String) -> String {
        output
            .replacing(/"timestamp":"[^"]*"/, with: #""timestamp":"(now)""#)
            .replacing(/"fullUrl":"urn:uuid:[0-9a-f-]{36}"/, with: #""fullUrl":"urn:uuid:(random)""#)
    }
}

/// Where two outputs part: the first differing line of each, with its number.
func firstDifference(_ actual: String, _ expected: String) -> String {
    let actualLines = actual.split(separator: "\n", omittingEmptySubsequences: false)
    let expectedLines = expected.split(separator: "\n", omittingEmptySubsequences: false)
    for index in 0..<max(actualLines.count, expectedLines.count) {
        let got = index < actualLines.count ? String(actualLines[index]) : "(no line)"
        let wanted = index < expectedLines.count ? String(expectedLines[index]) : "(no line)"
        if got != wanted { return "line \(index + 1): got \(got.debugDescription), expected \(wanted.debugDescription)" }
    }
    return "no difference"
}
