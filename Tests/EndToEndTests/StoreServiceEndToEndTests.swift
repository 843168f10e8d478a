@preconcurrency import Glibc
import Foundation
import TestSupport
import Testing

/// Whether the built hrmd serves the store on D-Bus (`hrmd --serve`): these tests need it.
private let hrmdServes: Bool = {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: BuiltProducts.hrmd)
    process.arguments = ["--help"]
    let output = Pipe()
    process.standardOutput = output
    process.standardError = FileHandle.nullDevice
    guard (try? process.run()) != nil else { return false }
    let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    return text.contains("--serve")
}()

private let notRunningLine =
    "hrmctl: the hrmd store service is not running on the system bus; start it with: systemctl start hrmd.service (or name a store file with --store PATH)\n"

/// The built hrmctl against the built `hrmd --serve` on a private bus (as root), compared with
/// the same hrmctl reading the store file directly.
@Suite("hrmctl through the store service on a private bus", .serialized, .timeLimit(.minutes(3)))
struct StoreServiceEndToEndTests {
    private final class Setup: @unchecked Sendable {
        let harness: Harness
        let bus: PrivateBus
        let environment: [String: String]

        init() async throws {
            harness = try Harness()
            bus = try await PrivateBus()
            var environment = harness.environment
            environment["DBUS_SYSTEM_BUS_ADDRESS"] = bus.address
            self.environment = environment
        }

        /// hrmctl without --store: through the service.
        func service(_ arguments: [String]) async throws -> CommandResult {
            try await ChildProcess.run(BuiltProducts.hrmctl, arguments, environment: environment, in: harness.directory)
        }

        /// hrmctl on the store file.
        func file(_ arguments: [String]) async throws -> CommandResult {
            try await ChildProcess.run(
                BuiltProducts.hrmctl, arguments + ["--store", harness.store], environment: environment, in: harness.directory)
        }

        func startService(_ sensors: [String]) throws -> ChildProcess {
            try ChildProcess(
                BuiltProducts.hrmd, ["--serve", "--store", harness.store, "--log-level", "debug"] + sensors.flatMap { ["--sensor", $0] },
                environment: environment, outputDirectory: harness.directory.path)
        }
    }

    private func lines(_ text: String) -> [[String: Any]] {
        text.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }

    @Test("no service on the bus: one line, exit 69, for every store subcommand")
    func nobodyAnswers() async throws {
        let setup = try await Setup()
        for arguments in [
            ["samples"], ["auth", "list"], ["auth", "requests"], ["auth", "grant", "hrmd", "heart-rate"], ["stats", "--by", "1m"],
            ["devices"], ["sources"], ["export", "--format", "csv"], ["watch", "--duration", "1"],
            ["delete", "--source", "hrmd", "--yes"],
        ] {
            let result = try await setup.service(arguments)
            #expect(result.exitCode == 69, "\(arguments): \(result.stderr)")
            #expect(result.stderr == notRunningLine, "\(arguments)")
        }
        // No bus at all is the same.
        var noBus = setup.environment
        noBus["DBUS_SYSTEM_BUS_ADDRESS"] = "unix:path=\(setup.harness.directory.file("no-bus"))"
        let result = try await ChildProcess.run(BuiltProducts.hrmctl, ["samples"], environment: noBus, in: setup.harness.directory)
        #expect(result.exitCode == 69)
        #expect(result.stderr == notRunningLine)
    }

    @Test(
        "every store subcommand through the service, the same as on the file",
        .enabled(if: hrmdServes, "the built hrmd has no --serve yet (the store service is on another branch)"))
    func throughTheService() async throws {
        let setup = try await Setup()
        let daemon = try setup.startService(["mock:hz=4", "mock:location=wrist"])
        defer { if daemon.isRunning { daemon.send(SIGKILL) } }
        try await eventually("the service answers") {
            try await setup.service(["auth", "list"]).exitCode == 0
        }

        let grant = try await setup.service(["auth", "grant", "hrmd", "heart-rate"])
        #expect(grant.exitCode == 0, "\(grant.stderr)")
        #expect(grant.stdout == "hrmd may now store heart-rate\n")
        try await eventually("mock samples through the service") {
            let samples = try await setup.service(["samples", "--output", "json"])
            return self.lines(samples.stdout).count >= 8
        }
        let samples = lines(try await setup.service(["samples", "--output", "json"]).stdout)
        #expect(samples.allSatisfy { $0["source"] as? String == "hrmd" && $0["unit"] as? String == "count/min" })
        #expect(samples.contains { ($0["metadata"] as? [String: Any])?["sensorLocation"] as? String == "wrist" })

        let watch = try await setup.service(["watch", "--output", "json", "--duration", "3"])
        #expect(watch.exitCode == 0, "\(watch.stderr)")
        #expect(lines(watch.stdout).count >= 2, "\(watch.stdout)")

        let stats = try await setup.service(["stats", "--by", "1m", "--output", "json"])
        #expect(stats.exitCode == 0, "\(stats.stderr)")
        #expect(!lines(stats.stdout).isEmpty)

        let list = try await setup.service(["auth", "list"])
        #expect(list.stdout.contains("hrmd") && list.stdout.contains("sharingAuthorized"), "\(list.stdout)")
        #expect(list.stdout == (try await setup.file(["auth", "list"])).stdout)
        let requests = try await setup.service(["auth", "requests"])
        #expect(requests.exitCode == 0, "\(requests.stderr)")
        let devices = try await setup.service(["devices", "--output", "json"])
        #expect(devices.exitCode == 0, "\(devices.stderr)")
        #expect(lines(devices.stdout).count >= 2, "\(devices.stdout)")

        // A closed range in the past: the same data either way.
        // It ends before two flushes that began after it: every sample in it is stored by then.
        let until = Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down))
        try await daemon.waitForFlushes(2, after: daemon.flushes, "the range's end")
        let formatter = ISO8601DateFormatter()
        let range = ["--since", formatter.string(from: until.addingTimeInterval(-120)), "--until", formatter.string(from: until)]
        for arguments in [
            ["samples", "--output", "json"], ["samples", "--output", "csv"], ["samples", "--reverse", "--limit", "3"],
            ["stats", "--by", "1m", "--output", "json"], ["stats", "--by", "1d"], ["stats", "--zones", "--max-hr", "190"],
            ["export", "--format", "csv"], ["export", "--format", "jsonl"], ["plot"],
        ] {
            let viaService = try await setup.service(arguments + range)
            let viaFile = try await setup.file(arguments + range)
            #expect(viaService.exitCode == 0, "\(arguments): \(viaService.stderr)")
            #expect(viaService.stdout == viaFile.stdout, "\(arguments)")
            #expect(viaService.exitCode == viaFile.exitCode, "\(arguments)")
        }

        // Ingestion stops storing once revoked: the inventory is then the same either way.
        #expect(try await setup.service(["auth", "revoke", "hrmd", "heart-rate"]).exitCode == 0)
        try await eventually("the revoke applied") { daemon.standardError.contains("was revoked") }
        try await daemon.waitForFlushes(1, after: daemon.flushes, "the revoke")
        let sources = try await setup.service(["sources"])
        #expect(sources.exitCode == 0, "\(sources.stderr)")
        #expect(sources.stdout == (try await setup.file(["sources"])).stdout)
        func counts(_ text: String) -> [String: Int] {
            Dictionary(lines(text).compactMap { row in
                (row["identifier"] as? String).map { ($0, row["samples"] as? Int ?? 0) }
            }, uniquingKeysWith: { first, _ in first })
        }
        #expect(counts(try await setup.service(["devices", "--output", "json"]).stdout)
            == counts(try await setup.file(["devices", "--output", "json"]).stdout))

        // Delete, as a manager, the daemon's samples of the range.
        let inRange = lines(try await setup.service(["samples", "--output", "json"] + range).stdout).count
        let delete = try await setup.service(["delete", "--source", "hrmd", "--yes"] + range)
        #expect(delete.exitCode == 0, "\(delete.stderr)")
        #expect(delete.stdout == "deleted \(inRange) heart-rate samples of hrmd\n")
        #expect(try await setup.file(["samples"] + range).stdout == "no samples\n")

        // Replay a small trace through Import, twice.
        #expect(try await setup.service(["auth", "grant", "hrmd", "heart-rate"]).exitCode == 0)
        let trace = setup.harness.directory.file("small.trace.jsonl")
        try """
            {"format":"hrmd-trace","version":1}
            {"t":"2026-01-01T00:00:01.000Z","transport":"ble","device":"AA:BB:CC:DD:EE:09","kind":"notify","characteristic":"2a37","value":"0048"}
            {"t":"2026-01-01T00:00:02.000Z","transport":"ble","device":"AA:BB:CC:DD:EE:09","kind":"notify","characteristic":"2a37","value":"0049"}
            {"t":"2026-01-01T00:00:03.000Z","transport":"ble","device":"AA:BB:CC:DD:EE:09","kind":"notify","characteristic":"2a37","value":"004a"}

            """.write(toFile: trace, atomically: true, encoding: .utf8)
        let replay = try await setup.service(["replay", trace])
        #expect(replay.exitCode == 0, "\(replay.stderr)")
        #expect(replay.stdout == "replayed: 3 frames; 3 samples stored; 0 already stored\n", "\(replay.stdout)")
        let again = try await setup.service(["replay", trace])
        #expect(again.stdout == "replayed: 3 frames; 0 samples stored; 3 already stored\n", "\(again.stdout)")
        let replayRange = ["--since", "2026-01-01T00:00:00Z", "--until", "2026-01-01T00:01:00Z"]
        let replayed = lines(try await setup.service(["samples", "--output", "json"] + replayRange).stdout)
        #expect(replayed.compactMap { $0["value"] as? Double } == [72, 73, 74])
        let bad = setup.harness.directory.file("bad.trace.jsonl")
        try "{\"format\":\"hrmd-trace\",\"version\":1}\nnot json\n".write(toFile: bad, atomically: true, encoding: .utf8)
        let badReplay = try await setup.service(["replay", bad])
        #expect(badReplay.exitCode == 65, "\(badReplay.stderr)")

        // A btsnoop capture without its discovery through Import, the handle named; then cut short.
        let late = StrapCapture.lateStart(datalink: .uart)
        let session = late.build()
        let capture = setup.harness.directory.file("late.btsnoop")
        try Data(session.bytes).write(to: URL(fileURLWithPath: capture))
        let named = try await setup.service(["replay", "--handle", "0x000a", capture])
        #expect(named.exitCode == 0, "\(named.stderr)")
        #expect(named.stdout.hasPrefix("replayed: 13 frames; 12 samples stored; 0 already stored"), "\(named.stdout)")
        #expect(named.stderr.contains("stored under the device hci-conn-0x0040") && !named.stderr.contains("no GATT discovery"))
        let cut = setup.harness.directory.file("cut.btsnoop")
        try Data(session.bytes.dropLast(3)).write(to: URL(fileURLWithPath: cut))
        let cutReplay = try await setup.service(["replay", "--handle", "0x000a", cut])
        #expect(cutReplay.exitCode == 65, "\(cutReplay.stderr)")
        #expect(cutReplay.stderr.contains("cut.btsnoop: record \(session.builder.recordCount): truncated"), "\(cutReplay.stderr)")
        #expect(cutReplay.stderr.contains("1 bad records were skipped"))

        daemon.send(SIGTERM)
        _ = try await daemon.wait()
        let gone = try await setup.service(["samples"])
        #expect(gone.exitCode == 69)
        #expect(gone.stderr == notRunningLine)
    }
}
