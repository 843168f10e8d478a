import Foundation
import TestSupport
import Testing

@Suite("record and replay end to end")
struct ReplayEndToEndTests {
    /// Records a short mock session with hrmd; returns the trace files.
    func recordSession(_ harness: Harness, seconds: Int = 3) async throws -> [String] {
        let directory = harness.directory.file("traces")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        _ = try await harness.hrmctl("auth", "grant", "hrmd", "heart-rate", "rr-interval")
        let result = try await ChildProcess.run(
            BuiltProducts.hrmd,
            ["--store", harness.store, "--sensor", "mock:hz=5,contact-loss=0", "--sensor", "mock:location=wrist,hz=2",
             "--record", directory, "--duration", "\(seconds)"],
            environment: harness.environment, in: harness.directory)
        #expect(result.exitCode == 0, "\(result.stderr)")
        return try FileManager.default.contentsOfDirectory(atPath: directory).sorted().map { "\(directory)/\($0)" }
    }

    func replay(_ harness: Harness, store: String, _ files: [String], extra: [String] = []) async throws -> CommandResult {
        try await harness.hrmctl(["replay", "--store", store] + extra + files, withStore: false)
    }

    @Test("mock → record → replay into a fresh store gives identical samples; twice stores nothing new")
    func roundTripAndIdempotency() async throws {
        let harness = try Harness()
        let traces = try await recordSession(harness)
        #expect(traces.count == 1)
        let firstLine = try String(contentsOfFile: traces[0], encoding: .utf8).split(separator: "\n").first ?? ""
        #expect(firstLine.contains(#""format":"hrmd-trace","version":1"#))

        let fresh = harness.directory.file("fresh.sqlite")
        _ = try await harness.hrmctl(["auth", "grant", "hrmd", "heart-rate", "rr-interval", "--store", fresh], withStore: false)
        let first = try await replay(harness, store: fresh, traces)
        #expect(first.exitCode == 0, "\(first.stderr)")
        for type in ["heart-rate", "rr-interval"] {
            let live = try await harness.hrmctl(["samples", "--type", type, "--output", "json"])
            let replayed = try await harness.hrmctl(["samples", "--type", type, "--output", "json", "--store", fresh], withStore: false)
            #expect(!live.stdout.isEmpty)
            let liveLines = live.stdout.split(separator: "\n"), replayedLines = replayed.stdout.split(separator: "\n")
            let onlyLive = liveLines.filter { !replayedLines.contains($0) }, onlyReplayed = replayedLines.filter { !liveLines.contains($0) }
            #expect(
                live.stdout == replayed.stdout,
                "\(type): \(liveLines.count) live, \(replayedLines.count) replayed; only live: \(onlyLive.prefix(3)); only replayed: \(onlyReplayed.prefix(3))")
        }
        let again = try await replay(harness, store: fresh, traces)
        #expect(again.exitCode == 0)
        #expect(again.stdout.contains("; 0 samples stored;"))
        // The live store already holds what the trace recorded.
        let intoLive = try await replay(harness, store: harness.store, traces)
        #expect(intoLive.stdout.contains("; 0 samples stored;"), "\(intoLive.stdout)")
    }

    @Test("bad lines are reported with their numbers, good lines are stored, exit 65")
    func corruptTrace() async throws {
        let harness = try Harness()
        _ = try await harness.hrmctl("auth", "grant", "hrmd", "heart-rate")
        let trace = harness.directory.file("damaged.trace.jsonl")
        let lines = [
            #"{"format":"hrmd-trace","version":1}"#,
            #"{"t":"2026-11-20T10:00:00.000Z","transport":"ble","device":"AA:BB:CC:DD:EE:FF","kind":"read","characteristic":"2a38","value":"01"}"#,
            #"{"t":"2026-11-20T10:00:01.000Z","transport":"ble","device":"AA:BB:CC:DD:EE:FF","kind":"notify","characteristic":"2a37","value":"0648"}"#,
            #"{"t":"2026-11-20T10:00:02.000Z","transport":"ble","device":"AA:BB:CC:DD:EE:FF","kind":"notify","characteristic":"2a37","value":"06"#,
            "garbage",
            #"{"t":"2026-11-20T10:00:03.000Z","transport":"ble","device":"AA:BB:CC:DD:EE:FF","kind":"notify","characteristic":"2a37","value":"zz"}"#,
            #"{"t":"2026-11-20T10:00:04.000Z","transport":"ble","device":"AA:BB:CC:DD:EE:FF","kind":"notify","characteristic":"2a37","value":"064a"}"#,
            #"{"t":"2026-11-20T10:00:05.000Z","transport":"ble","device":"AA:BB:CC:DD:EE:FF","kind":"battery-low","extra":true}"#,
        ]
        try lines.joined(separator: "\n").write(toFile: trace, atomically: true, encoding: .utf8)
        let result = try await replay(harness, store: harness.store, [trace])
        #expect(result.exitCode == 65)
        for line in [4, 5, 6] { #expect(result.stderr.contains("damaged.trace.jsonl:\(line):"), "line \(line)") }
        #expect(!result.stderr.contains("jsonl:8:"), "unknown kinds are ignored, not bad")
        let samples = try await harness.samples()
        #expect(samples.count == 2)
        #expect(samples.allSatisfy { ($0["metadata"] as? [String: Any])?["sensorLocation"] as? String == "chest" })
        #expect(samples.first?["start"] as? String == "2026-11-20T10:00:01.000Z")
    }

    @Test("missing file 66, not a recording 65, not authorized 77")
    func failures() async throws {
        let harness = try Harness()
        _ = try await harness.hrmctl("auth", "grant", "hrmd", "rr-interval")
        let missing = try await replay(harness, store: harness.store, [harness.directory.file("nope.jsonl")])
        #expect(missing.exitCode == 66)
        let text = harness.directory.file("notes.txt")
        try "hello\n".write(toFile: text, atomically: true, encoding: .utf8)
        _ = try await harness.hrmctl("auth", "revoke", "hrmd", "heart-rate")
        let notTrace = try await replay(harness, store: harness.store, [text])
        #expect(notTrace.exitCode == 65)
        #expect(notTrace.stderr.split(separator: "\n").count == 1)
        let trace = harness.directory.file("one.trace.jsonl")
        try [#"{"format":"hrmd-trace","version":1}"#,
             #"{"t":"2026-11-20T10:00:01.000Z","transport":"ble","device":"AA:BB:CC:DD:EE:FF","kind":"notify","characteristic":"2a37","value":"0648"}"#,
        ].joined(separator: "\n").write(toFile: trace, atomically: true, encoding: .utf8)
        let denied = try await replay(harness, store: harness.store, [trace])
        #expect(denied.exitCode == 77)
        #expect(denied.stderr.contains("hrmctl auth grant hrmd heart-rate"))
    }

    @Test("hrmd --sensor replay:FILE plays a recording through the daemon")
    func daemonReplay() async throws {
        let harness = try Harness()
        let traces = try await recordSession(harness, seconds: 2)
        let other = harness.directory.file("daemon-replay.sqlite")
        _ = try await harness.hrmctl(["auth", "grant", "hrmd", "heart-rate", "rr-interval", "--store", other], withStore: false)
        let live = try await harness.hrmctl(["samples", "--output", "json"])
        #expect(!live.stdout.isEmpty)
        // The replay is paced in real time; wait (bounded) until it has all arrived, whatever the load.
        let daemon = try ChildProcess(
            BuiltProducts.hrmd, ["--store", other, "--sensor", "replay:\(traces[0])"],
            environment: harness.environment, outputDirectory: harness.directory.path)
        try await eventually("the replay has stored what was stored live") {
            try await harness.hrmctl(["samples", "--output", "json", "--store", other], withStore: false).stdout == live.stdout
        }
        daemon.send(SIGTERM)
        #expect(try await daemon.wait() == .exited(0), "\(daemon.standardError)")
        let replayed = try await harness.hrmctl(["samples", "--output", "json", "--store", other], withStore: false)
        #expect(live.stdout == replayed.stdout)
        let missing = try await ChildProcess.run(
            BuiltProducts.hrmd, ["--store", other, "--sensor", "replay:/nonexistent.jsonl"],
            environment: harness.environment, in: harness.directory)
        #expect(missing.exitCode == 66)
    }

    static let fitFixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("FITDecodingTests/Fixtures").path

    @Test("a FIT file from a watch: every record's heart rate at its UTC time, once")
    func fitFile() async throws {
        let harness = try Harness()
        _ = try await harness.hrmctl("auth", "grant", "hrmd", "heart-rate")
        let fit = "\(Self.fitFixtures)/garmin-edge-820-bike.fit"
        let first = try await replay(harness, store: harness.store, [fit])
        #expect(first.exitCode == 0, "\(first.stderr)")
        let samples = try await harness.samples()
        let csv = try String(contentsOfFile: "\(Self.fitFixtures)/garmin-edge-820-bike-records.csv", encoding: .utf8)
        let expected = csv.split(whereSeparator: \.isNewline).dropFirst().compactMap { line -> Double? in
            let columns = line.split(separator: ",", omittingEmptySubsequences: false)
            return columns.count > 1 ? Double(columns[1]) : nil
        }
        #expect(samples.count == expected.count)
        #expect(samples.compactMap { $0["value"] as? Double } == expected)
        #expect(samples.first?["start"] as? String == "2017-06-12T16:10:15.000Z")  // 09:10:15 PDT
        #expect((samples.first?["device"] as? [String: Any])?["manufacturer"] as? String == "Garmin")
        let again = try await replay(harness, store: harness.store, [fit])
        #expect(again.stdout.contains("; 0 samples stored;"))
    }

    @Test("a truncated FIT file is exit 65 saying what was read; --accept-damaged stores that part")
    func damagedFIT() async throws {
        let harness = try Harness()
        _ = try await harness.hrmctl("auth", "grant", "hrmd", "heart-rate")
        let fit = "\(Self.fitFixtures)/activity-unexpected-eof.fit"
        let strict = try await replay(harness, store: harness.store, [fit])
        #expect(strict.exitCode == 65)
        #expect(strict.stderr.contains("truncated") && strict.stderr.contains("--accept-damaged"))
        #expect(strict.stderr.split(separator: "\n").count == 1)
        let accepted = try await replay(harness, store: harness.store, [fit], extra: ["--accept-damaged"])
        #expect(accepted.exitCode == 0, "\(accepted.stderr)")
    }
}
