import ANTDecoding
import Foundation
import TestSupport
import Testing

/// udev discovery and hot-plug against fake devices: `Tests/udev/hotplug-driver.py` builds a
/// umockdev testbed, starts the real program inside it and plugs tty devices in and out.
@Suite("udev hot-plug end to end", .serialized)
struct HotplugEndToEndTests {
    static let wrapper = "/usr/bin/umockdev-wrapper"
    static let python = "/usr/bin/python3"
    static let driver = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("udev/hotplug-driver.py").path

    /// Runs one driver scenario; records why when it cannot run or fails.
    static func drive(_ arguments: [String], in harness: Harness, timeout: Duration = HangBound.duration) async throws -> CommandResult? {
        guard FileManager.default.isExecutableFile(atPath: wrapper) else {
            Issue.record("umockdev-wrapper is missing: install umockdev and gir1.2-umockdev-1.0 (make deps)")
            return nil
        }
        let result = try await ChildProcess.run(
            wrapper, [python, driver] + arguments, environment: harness.environment, in: harness.directory, timeout: timeout)
        #expect(result.exitCode == 0, "driver: \(result.stderr)\n\(result.stdout)")
        return result
    }

    @Test("start-up finds marked sticks and Dynastream sticks without rules; the monitor sees add and remove")
    func discoveryAndMonitor() async throws {
        let harness = try Harness()
        guard let result = try await Self.drive(["discovery", BuiltProducts.path(of: "hotplug-probe")], in: harness) else { return }
        let ttyUSB0 = "/sys/devices/pci0000:00/0000:00:14.0/usb1/1-1/1-1:1.0/ttyUSB0/tty/ttyUSB0"
        #expect(result.stdout.split(separator: "\n").map(String.init) == [
            "added ant /dev/ttyUSB0 0fcf:1008 baud=115200",
            "added ant /dev/ttyUSB1 0fcf:1004 baud=115200",
            "scanned",
            "added serial /dev/ttyACM0 -:- baud=9600",
            "removed \(ttyUSB0)",
            "added ant /dev/ttyUSB0 0fcf:1008 baud=115200",
            "ttyUSB2 ignored",
        ])
    }

    @Test("hrmd --sensor serial: a plugged sensor streams, is released on unplug and taken again on replug; a mock beside it never stalls")
    func serialSensorReplug() async throws {
        let harness = try Harness()
        let grant = try await harness.hrmctl("auth", "grant", "hrmd", "heart-rate")
        #expect(grant.exitCode == 0, "\(grant.stderr)")
        let log = harness.directory.file("hrmd.log")
        guard let result = try await Self.drive(["serial", BuiltProducts.hrmd, harness.store, log], in: harness) else { return }
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(lines.last == "hrmd exit 0", "\(result.stdout)")
        let retake = try #require(Self.retakeSeconds(lines))
        #expect(retake < 5, "the replugged sensor is open again within seconds")
        let unplugged = try #require(lines.first { $0.hasPrefix("while unplugged: ") })
        #expect(unplugged.contains(#""state":"stopped","stateDetail":"/dev/ttyACM0 was unplugged""#), "hrmctl devices: \(unplugged)")

        let samples = try await harness.samples()
        let serial = samples.filter { Self.identifier($0) == "serial-ttyACM0" }.compactMap { $0["value"] as? Double }
        #expect(serial.contains(72), "readings before the unplug were stored")
        #expect(serial.contains(81), "readings after the replug were stored")
        #expect(Set(serial).isSubset(of: [72, 81]), "\(serial)")
        let mockStarts = samples.filter { Self.identifier($0) == "mock-1" }.compactMap { $0["start"] as? String }.compactMap(Self.parseTime)
        let longestGap = zip(mockStarts, mockStarts.dropFirst()).map { $1 - $0 }.max() ?? .infinity
        #expect(mockStarts.count >= 20 && longestGap < 1.5, "the mock strap kept storing through plug and unplug (\(mockStarts.count) beats, longest gap \(longestGap) s)")
        let logText = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        let added = logText.components(separatedBy: "serial sensor /dev/ttyACM0 added").count - 1
        let removed = logText.components(separatedBy: "serial sensor /dev/ttyACM0 removed").count - 1
        #expect(added == 2 && removed == 1, "each plug and unplug is logged once:\n\(logText)")
    }

    @Test("hrmd --sensor ant: a plugged ANTUSB2 stick streams, is released on unplug and set up again on replug")
    func antStickReplug() async throws {
        let harness = try Harness()
        let grant = try await harness.hrmctl("auth", "grant", "hrmd", "heart-rate")
        #expect(grant.exitCode == 0, "\(grant.stderr)")
        let terminal = try PseudoTerminal()
        let stick = FakeANTStick(terminal: terminal, straps: [.init(deviceNumber: 1001, rrTicks: 1024)], hz: 4)
        stick.start()
        defer { stick.stop() }
        let log = harness.directory.file("hrmd.log")
        guard let result = try await Self.drive(["ant", BuiltProducts.hrmd, harness.store, log, terminal.devicePath], in: harness)
        else { return }
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(lines.last == "hrmd exit 0", "\(result.stdout)")

        let resets = stick.commands.filter { $0.id == ANTMessageID.reset }.count
        #expect(resets >= 2, "the stick is set up at start and again after the replug (\(resets) resets)")
        let replug = try #require(lines.first { $0.hasPrefix("replugged at ") }.flatMap { Double($0.dropFirst("replugged at ".count)) })
        let retake = try #require(Self.retakeSeconds(lines))
        #expect(retake < 5, "the replugged stick is open again within seconds")
        let samples = try await harness.samples()
        let starts = samples.compactMap { $0["start"] as? String }.compactMap(Self.parseTime)
        #expect(samples.allSatisfy { Self.identifier($0) == "ant-1001" && $0["value"] as? Double == 60 })
        #expect(starts.contains { $0 < replug }, "beats stored before the unplug")
        #expect(starts.contains { $0 > replug }, "beats stored after the replug")
    }

    static func identifier(_ sample: [String: Any]) -> String? {
        (sample["device"] as? [String: Any])?["identifier"] as? String
    }

    /// The driver's "taken again in S s": from the replug to the backend opening the tty.
    static func retakeSeconds(_ lines: [String]) -> Double? {
        lines.first { $0.hasPrefix("taken again in ") }
            .flatMap { Double($0.dropFirst("taken again in ".count).split(separator: " ").first ?? "") }
    }

    /// Seconds since 1970 of an RFC 3339 time with milliseconds.
    static func parseTime(_ text: String) -> Double? {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.date(from: text)?.timeIntervalSince1970
    }
}
