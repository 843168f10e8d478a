import Foundation
import TestSupport
import Testing

/// The real `hrmd` reading an ANT stick and a serial sensor on ptys.
@Suite("hrmd with ANT sticks and serial sensors", .serialized)
struct TTYEndToEndTests {
    private func identifier(_ sample: [String: Any]) -> String? {
        (sample["device"] as? [String: Any])?["identifier"] as? String
    }

    private func devices(_ harness: Harness) async throws -> [[String: Any]] {
        let result = try await harness.hrmctl(["devices", "--output", "json", "--store", harness.store], withStore: false)
        return result.stdout.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }

    @Test("an ANT stick with two straps: each its own device with its values, RR intervals, maker, battery; location from the configuration")
    func antStick() async throws {
        let harness = try Harness()
        let terminal = try PseudoTerminal()
        let stick = FakeANTStick(
            terminal: terminal, straps: [.init(deviceNumber: 1001, rrTicks: 1024), .init(deviceNumber: 2002, rrTicks: 768)], hz: 4,
            garbageEvery: 7)
        stick.start()
        defer { stick.stop() }
        let config = harness.directory.file("hrmd.conf")
        try "[locations]\nant-1001 = chest\n".write(toFile: config, atomically: true, encoding: .utf8)
        _ = try await harness.hrmctl("auth", "grant", "hrmd", "all")
        let daemon = try harness.startDaemon(["--config", config, "--sensor", "ant:\(terminal.devicePath)"])
        try await eventually("both straps have stored a few beats") {
            let samples = try await harness.samples()
            return samples.filter { identifier($0) == "ant-1001" }.count >= 3 && samples.filter { identifier($0) == "ant-2002" }.count >= 3
        }
        try await eventually("the straps' pages named their maker and battery") {
            try await devices(harness).contains { $0["identifier"] as? String == "ant-1001" && $0["battery"] as? Int == 88 }
        }
        daemon.send(SIGTERM)
        #expect(try await daemon.wait() == .exited(0), "\(daemon.standardError)")

        let samples = try await harness.samples()
        for sample in samples {
            let location = (sample["metadata"] as? [String: Any])?["sensorLocation"] as? String
            switch identifier(sample) {
            case "ant-1001":
                #expect(sample["value"] as? Double == 60)
                #expect(location == "chest")
            case "ant-2002":
                #expect(sample["value"] as? Double == 80)
                #expect(location == nil, "ANT+ has no location field: none unless configured")
            default:
                Issue.record("unexpected device \(String(describing: sample["device"]))")
            }
        }
        let rr = try await harness.samples(type: "rr-interval")
        #expect(!rr.isEmpty)
        for sample in rr {
            let expected = identifier(sample) == "ant-1001" ? 1000.0 : 750.0
            #expect(abs((sample["value"] as? Double ?? 0) - expected) < 0.01, "\(sample)")
        }
        let rows = try await devices(harness)
        let strap = try #require(rows.first { $0["identifier"] as? String == "ant-1001" })
        #expect(strap["manufacturer"] as? String == "Polar Electro")
        #expect(strap["transport"] as? String == "ant")
        #expect(strap["model"] as? String == "9")
        #expect(daemon.standardError.contains("ANT+ strap 1001 found"), "\(daemon.standardError)")
    }

    @Test("a serial sensor's lines are stored; a bad line is a counted skip that disturbs nothing")
    func serialSensor() async throws {
        let harness = try Harness()
        let terminal = try PseudoTerminal()
        _ = try await harness.hrmctl("auth", "grant", "hrmd", "all")
        let daemon = try harness.startDaemon(["--sensor", "serial:\(terminal.devicePath),baud=9600"])
        var written = 0
        try await eventually("lines become samples") {
            written += 1
            terminal.write(Array((written % 5 == 0 ? "HR banana\n" : "HR 70 RR 857\n").utf8))
            return try await harness.samples().count >= 8
        }
        daemon.send(SIGTERM)
        #expect(try await daemon.wait() == .exited(0), "\(daemon.standardError)")
        let samples = try await harness.samples()
        #expect(samples.allSatisfy { $0["value"] as? Double == 70 && identifier($0) == "serial-\(terminal.devicePath.split(separator: "/").last!)" })
        let rr = try await harness.samples(type: "rr-interval")
        #expect(rr.allSatisfy { $0["value"] as? Double == 857 })
        #expect(daemon.standardError.contains("malformed"), "\(daemon.standardError)")
    }

    @Test("a missing tty is a logged, retried state, not an exit")
    func missingTTY() async throws {
        let harness = try Harness()
        _ = try await harness.hrmctl("auth", "grant", "hrmd", "all")
        let daemon = try harness.startDaemon(["--sensor", "ant:/dev/hrmd-no-such-stick"])
        try await eventually("the failure is logged with its cause") {
            daemon.standardError.contains("cannot open /dev/hrmd-no-such-stick")
        }
        #expect(daemon.isRunning)
        daemon.send(SIGTERM)
        #expect(try await daemon.wait() == .exited(0), "\(daemon.standardError)")
    }
}
