import Foundation
import TestSupport
import Testing

@Suite("hrmd end to end", .serialized)
struct DaemonEndToEndTests {
    @Test("mock sensors: nothing stored until granted, then readings with device and location")
    func grantMidRun() async throws {
        let harness = try Harness()
        // No --duration here: on a loaded machine the grant below may come many seconds after
        // start-up, and the daemon must still be running then. SIGTERM ends it.
        let daemon = try harness.startDaemon([
            "--log-level", "debug", "--sensor", "mock:hz=5,seed=1", "--sensor", "mock:hz=5,location=wrist,seed=2",
        ])
        try await eventually("hrmd asks for permission in its log") {
            daemon.standardError.contains("hrmctl auth grant hrmd heart-rate")
        }
        let listed = try await harness.hrmctl("auth", "list", "--output", "json")
        #expect(listed.stdout.contains(#""source":"hrmd","type":"heart-rate","share":"notDetermined""#))
        // A negative check, made after a flush that took samples to the store and had them refused.
        try await eventually("a flush refuses samples") { daemon.flushes.contains { $0.denied > 0 } }
        let before = try await harness.hrmctl("samples")
        #expect(before.exitCode == 0)
        #expect(before.stdout.contains("no samples"))

        let grant = try await harness.hrmctl("auth", "grant", "hrmd", "heart-rate")
        #expect(grant.exitCode == 0, "\(grant.stderr)")
        try await eventually("samples are stored after the grant") {
            try await harness.samples().count >= 10
        }
        try await eventually("both mocks have stored") {
            Set(try await harness.samples().compactMap { ($0["device"] as? [String: Any])?["identifier"] as? String }).count == 2
        }
        daemon.send(SIGTERM)
        let termination = try await daemon.wait()
        #expect(termination == .exited(0), "\(daemon.standardError)")

        let samples = try await harness.samples()
        #expect(samples.count >= 10)
        let devices = Set(samples.compactMap { ($0["device"] as? [String: Any])?["identifier"] as? String })
        #expect(devices == ["mock-1", "mock-2"])
        for sample in samples {
            #expect(sample["type"] as? String == "heart-rate")
            #expect(sample["unit"] as? String == "count/min")
            #expect(sample["source"] as? String == "hrmd")
            let value = try #require(sample["value"] as? Double)
            #expect((1...300).contains(value))
            let start = try #require(sample["start"] as? String)
            #expect(start.hasSuffix("Z") && start.count == "2026-11-20T10:00:00.000Z".count)
            let identifier = (sample["device"] as? [String: Any])?["identifier"] as? String
            let location = (sample["metadata"] as? [String: Any])?["sensorLocation"] as? String
            #expect(location == (identifier == "mock-1" ? "chest" : "wrist"))
        }
        let starts = samples.compactMap { $0["start"] as? String }
        #expect(starts == starts.sorted(), "oldest first")
    }

    @Test("a revoke stops storage from the next write; a new grant resumes it")
    func revokeAndRegrant() async throws {
        let harness = try Harness()
        _ = try await harness.hrmctl("auth", "grant", "hrmd", "heart-rate")
        let daemon = try harness.startDaemon(["--log-level", "debug", "--sensor", "mock:hz=20"])
        try await eventually("samples arrive") { try await harness.samples().count >= 20 }

        let revoke = try await harness.hrmctl("auth", "revoke", "hrmd", "heart-rate")
        #expect(revoke.exitCode == 0)
        // hrmd logs the revoke when it applies it, at its next write: from then on nothing is stored.
        try await eventually("the revoke is logged") { daemon.standardError.contains("was revoked") }
        let afterRevoke = try await harness.samples().count
        // A negative check, made after two more flushes: the second began after the count above
        // was read.
        try await daemon.waitForFlushes(2, after: daemon.flushes, "the count")
        #expect(try await harness.samples().count == afterRevoke, "nothing stored after a revoke")

        _ = try await harness.hrmctl("auth", "grant", "hrmd", "heart-rate")
        try await eventually("storage resumes after a new grant") { try await harness.samples().count > afterRevoke + 10 }
        daemon.send(SIGTERM)
        #expect(try await daemon.wait() == .exited(0), "\(daemon.standardError)")
    }

    @Test("SIGTERM writes the pending batch, closes the store and exits 0")
    func sigtermFlushes() async throws {
        let harness = try Harness()
        let config = harness.directory.file("slow-flush.conf")
        // A flush interval far longer than the run: only the shutdown flush can write.
        try "[hrmd]\nflush-interval = 60\n".write(toFile: config, atomically: true, encoding: .utf8)
        _ = try await harness.hrmctl("auth", "grant", "hrmd", "heart-rate")
        // The frames are recorded as they arrive: the trace shows what hrmd holds unwritten.
        let traces = harness.directory.file("traces")
        try FileManager.default.createDirectory(atPath: traces, withIntermediateDirectories: false)
        let daemon = try harness.startDaemon(["--config", config, "--record", traces, "--sensor", "mock:hz=20,contact-loss=0"])
        try await eventually("the sensor streams") { daemon.standardError.contains("sensor mock-1 started") }
        // A negative check, made once hrmd has taken 30 frames (recorded as they came).
        try await eventually("30 frames recorded") { try Self.recordedFrames(in: traces) >= 30 }
        #expect(try await harness.samples().isEmpty, "nothing is written before the flush interval")
        daemon.send(SIGTERM)
        #expect(try await daemon.wait() == .exited(0), "\(daemon.standardError)")
        let stored = try await harness.samples().count
        #expect(stored >= 30)
        #expect(daemon.standardError.contains("\(stored) samples stored"), "the final log line counts what the store holds")
    }

    @Test("hrmctl devices shows each sensor's state and battery while hrmd runs, and stopped after")
    func devicesShowLiveState() async throws {
        let harness = try Harness()
        _ = try await harness.hrmctl("auth", "grant", "hrmd", "heart-rate")
        let daemon = try harness.startDaemon(["--sensor", "mock:hz=4,id=left", "--sensor", "mock:hz=4,id=right"])
        func devices() async throws -> [[String: Any]] {
            let result = try await harness.hrmctl(["devices", "--output", "json", "--store", harness.store], withStore: false)
            return result.stdout.split(separator: "\n").compactMap {
                try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
            }
        }
        try await eventually("both sensors are streaming") {
            let rows = try await devices()
            return rows.count == 2 && rows.allSatisfy { $0["state"] as? String == "streaming" && ($0["samples"] as? Int ?? 0) > 0 }
        }
        let streaming = try await devices()
        #expect(streaming.map { $0["identifier"] as? String } == ["left", "right"])
        #expect(streaming.allSatisfy { $0["battery"] as? Int == 95 && $0["transport"] as? String == "mock" })
        let table = try await harness.hrmctl(["devices", "--store", harness.store], withStore: false)
        #expect(table.stdout.contains("STATE") && table.stdout.contains("streaming") && table.stdout.contains("95%"))

        daemon.send(SIGTERM)
        #expect(try await daemon.wait() == .exited(0), "\(daemon.standardError)")
        let stopped = try await devices()
        #expect(stopped.count == 2 && stopped.allSatisfy { $0["state"] as? String == "stopped" })
    }

    @Test("--duration ends the daemon on its own with exit 0 and the last batch written")
    func durationEndsCleanly() async throws {
        let harness = try Harness()
        _ = try await harness.hrmctl("auth", "grant", "hrmd", "heart-rate")
        let result = try await ChildProcess.run(
            BuiltProducts.hrmd, ["--store", harness.store, "--sensor", "mock:hz=10,contact-loss=0", "--duration", "2"],
            environment: harness.environment, in: harness.directory)
        #expect(result.exitCode == 0, "\(result.stderr)")
        let stored = try await harness.samples().count
        #expect(stored >= 10)
        #expect(result.stderr.contains("\(stored) samples stored"), "\(result.stderr)")
    }

    @Test("start-up errors are one line with the contract's exit status")
    func startupErrors() async throws {
        let harness = try Harness()
        let hrmd = BuiltProducts.hrmd
        func run(_ arguments: [String]) async throws -> CommandResult {
            try await ChildProcess.run(hrmd, arguments, environment: harness.environment, in: harness.directory)
        }
        let badSensor = try await run(["--store", harness.store, "--sensor", "bogus"])
        #expect(badSensor.exitCode == 64)
        #expect(badSensor.stderr.contains("unknown kind 'bogus'"))

        let config = harness.directory.file("hrmd.conf")
        try "[hrmd]\nsensor = mock\ncolour = blue\n".write(toFile: config, atomically: true, encoding: .utf8)
        let badConfig = try await run(["--store", harness.store, "--config", config])
        #expect(badConfig.exitCode == 64)
        #expect(badConfig.stderr.contains("\(config):3: key 'colour'"))
        #expect(badConfig.stderr.split(separator: "\n").count == 1)

        let missingConfig = try await run(["--store", harness.store, "--config", harness.directory.file("none.conf")])
        #expect(missingConfig.exitCode == 66)

        let noSensors = try await run(["--store", harness.store])
        #expect(noSensors.exitCode == 64)
        #expect(noSensors.stderr.contains("--sensor"))

        let badStore = try await run(["--store", harness.directory.file("missing/dir/hr.sqlite"), "--sensor", "mock"])
        #expect(badStore.exitCode == 73)

        let help = try await run(["--help"])
        #expect(help.exitCode == 0)
        #expect(help.stdout.contains("SENSORS") && help.stdout.contains("EXIT STATUS"))
    }

    @Test("a configuration file chooses sensors, the store and locations")
    func configurationFile() async throws {
        let harness = try Harness()
        let config = harness.directory.file("hrmd.conf")
        try """
            [hrmd]
            store = \(harness.store)
            sensor = mock:hz=10,id=left
            flush-interval = 0.2
            [locations]
            left = finger
            """.write(toFile: config, atomically: true, encoding: .utf8)
        _ = try await harness.hrmctl("auth", "grant", "hrmd", "heart-rate")
        let result = try await ChildProcess.run(
            BuiltProducts.hrmd, ["--config", config, "--duration", "3"], environment: harness.environment,
            in: harness.directory)
        #expect(result.exitCode == 0, "\(result.stderr)")
        let samples = try await harness.samples()
        #expect(!samples.isEmpty)
        #expect(samples.allSatisfy { ($0["metadata"] as? [String: Any])?["sensorLocation"] as? String == "finger" })
        #expect(samples.allSatisfy { ($0["device"] as? [String: Any])?["identifier"] as? String == "left" })
    }

    /// The Heart Rate Measurements hrmd has recorded in the traces of `directory` so far.
    static func recordedFrames(in directory: String) throws -> Int {
        try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasSuffix(".trace.jsonl") }.reduce(0) { total, name in
            let text = try String(contentsOfFile: directory + "/" + name, encoding: .utf8)
            return total + text.split(separator: "\n").filter { $0.contains(#""kind":"notify","characteristic":"2a37""#) }.count
        }
    }
}
