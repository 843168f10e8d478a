@preconcurrency import Glibc
import Foundation

/// The fake bluetoothd (`Tests/BlueZ/fake_bluez.py`) on a private bus, driven by its stdin
/// commands. Its stdin is a FIFO this object holds open; closing it (or `kill()`) ends it.
public final class FakeBlueZ: @unchecked Sendable {
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    /// The fake's script, found from this source file's place in the repository.
    public static var script: String {
        let support = (#filePath as NSString).deletingLastPathComponent
        return ((support as NSString).deletingLastPathComponent as NSString).appendingPathComponent("BlueZ/fake_bluez.py")
    }

    public let process: ChildProcess
    private var input: Int32
    private var answersRead = 0

    /// Starts the fake with `scenario` (the JSON its usage describes) and waits until it owns `org.bluez`.
    public init(bus: PrivateBus, scenario: String, in directory: TemporaryDirectory) async throws {
        let name = "fake-bluez-\(UUID().uuidString.prefix(8))"
        let scenarioPath = directory.file("\(name).json")
        try scenario.write(toFile: scenarioPath, atomically: true, encoding: .utf8)
        let fifo = directory.file("\(name).stdin")
        guard mkfifo(fifo, 0o600) == 0 else { throw Failure(description: "mkfifo \(fifo): errno \(errno)") }
        input = open(fifo, O_RDWR | O_CLOEXEC)  // never blocks, and lets the child's O_RDONLY open succeed
        guard input >= 0 else { throw Failure(description: "open \(fifo): errno \(errno)") }
        process = try ChildProcess(
            "/usr/bin/python3", [Self.script, "--address", bus.address, "--scenario", scenarioPath],
            outputDirectory: directory.path, stdinPath: fifo)
        try await waitForLines(1, what: "ready")
        guard lines.first == "ready" else { throw Failure(description: "the fake did not say ready: \(process.standardError)") }
    }

    private var lines: [String] { process.standardOutput.split(separator: "\n").map(String.init) }

    /// Waits for the fake's `count`th line of output (it answers each command with one); throws
    /// when the fake ends first, or ``WaitHung`` past the hang bound.
    private func waitForLines(_ count: Int, what: String) async throws {
        try await eventually("the fake's answer to \(what)", checkingEvery: .milliseconds(20)) {
            if lines.count >= count { return true }
            guard process.isRunning || lines.count >= count else {
                throw Failure(description: "the fake ended waiting for \(what): \(process.standardError)")
            }
            return lines.count >= count
        }
    }

    /// Sends one command and returns its JSON answer; throws when the answer is not ok.
    @discardableResult
    public func command(_ line: String) async throws -> [String: Any] {
        let text = line + "\n"
        guard write(input, text, text.utf8.count) == text.utf8.count else { throw Failure(description: "writing \(line) failed") }
        answersRead += 1
        try await waitForLines(answersRead + 1, what: line)
        let answer = lines[answersRead]
        guard let object = try JSONSerialization.jsonObject(with: Data(answer.utf8)) as? [String: Any] else {
            throw Failure(description: "\(line): not JSON: \(answer)")
        }
        guard object["ok"] as? Bool == true else { throw Failure(description: "\(line): \(answer)") }
        return object
    }

    /// The fake's counters for one strap, or for all.
    public func stats(_ address: String? = nil) async throws -> [String: Any] {
        try await command(address.map { "stats \($0)" } ?? "stats")
    }

    /// Ends the fake at once, as a crashed bluetoothd would end.
    public func kill() {
        process.send(SIGKILL)
        if input >= 0 {
            close(input)
            input = -1
        }
    }

    deinit { kill() }
}
