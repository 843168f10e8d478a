import BluetoothWire
import Foundation
import TestSupport
import Testing
import Timestamps

@Suite("btsnoop captures replayed end to end")
struct CaptureReplayEndToEndTests {
    func write(_ harness: Harness, _ name: String, _ bytes: [UInt8]) throws -> String {
        let path = harness.directory.file(name)
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    func replay(_ harness: Harness, _ arguments: [String]) async throws -> CommandResult {
        try await harness.hrmctl(["replay", "--store", harness.store] + arguments, withStore: false)
    }

    static func time(_ microseconds: Int64) -> String {
        RFC3339.string(from: Timestamp(microsecondsSinceEpoch: microseconds))
    }

    @Test("hrmctl replay of Android's and btmon's captures of one session: the strap's samples as the capture holds them, once")
    func replayIntoAStore() async throws {
        let harness = try Harness()
        _ = try await harness.hrmctl("auth", "grant", "hrmd", "heart-rate", "rr-interval")
        let strap = StrapCapture(datalink: .uart)
        let android = try write(harness, "btsnoop_hci.log", strap.capture())
        let first = try await replay(harness, [android])
        #expect(first.exitCode == 0, "\(first.stderr)")
        #expect(first.stderr.isEmpty, "\(first.stderr)")
        #expect(first.stdout.hasPrefix("replayed: 23 frames; "))

        let samples = try await harness.samples()
        #expect(samples.compactMap { $0["value"] as? Double } == strap.measurements.map { Double($0.heartRate) })
        #expect(samples.compactMap { $0["start"] as? String } == strap.measurements.map { Self.time($0.time) })
        let device = try #require(samples.first?["device"] as? [String: Any])
        #expect(device["identifier"] as? String == "C8:3F:41:0A:9B:27")
        #expect(device["manufacturer"] as? String == "Polar Electro Oy" && device["model"] as? String == "H10")
        #expect((samples.first?["metadata"] as? [String: Any])?["sensorLocation"] as? String == "chest")
        let intervals = try await harness.samples(type: "rr-interval")
        #expect(intervals.count == strap.measurements.reduce(0) { $0 + $1.rrIntervals.count })

        let again = try await replay(harness, [android])
        #expect(again.exitCode == 0 && again.stdout.contains("; 0 samples stored;"), "\(again.stdout)")
        var monitor = StrapCapture(datalink: .monitor)
        monitor.enhancedConnection = true
        let btmon = try write(harness, "btmon.btsnoop", monitor.capture())
        let fromBtmon = try await replay(harness, [btmon])
        #expect(fromBtmon.exitCode == 0 && fromBtmon.stdout.contains("; 0 samples stored;"), "\(fromBtmon.stdout)")
    }

    @Test("a truncated and a damaged capture: record numbers, exit 65, the good samples stored")
    func damagedCaptures() async throws {
        let harness = try Harness()
        _ = try await harness.hrmctl("auth", "grant", "hrmd", "heart-rate")
        let session = StrapCapture(datalink: .uart).build()
        let truncated = try write(harness, "truncated.btsnoop", Array(session.bytes.dropLast(3)))
        let result = try await replay(harness, [truncated])
        #expect(result.exitCode == 65)
        #expect(result.stderr.contains("truncated.btsnoop: record \(session.builder.recordCount): truncated"), "\(result.stderr)")
        #expect(result.stderr.contains("1 bad records were skipped; the good ones are stored"))
        #expect(try await harness.samples().count == 12)

        // A corrupt length in the middle of the notifications: what came before is stored.
        var bytes = session.bytes
        let (record, offset) = try Self.record(after: StrapCapture.start + 9_500_000, in: bytes)
        bytes.replaceSubrange(offset + 4..<offset + 8, with: be32(0xFFFF_FFFF))
        let corrupt = try write(harness, "corrupt.btsnoop", bytes)
        let other = harness.directory.file("other.sqlite")
        _ = try await harness.hrmctl(["auth", "grant", "hrmd", "heart-rate", "--store", other], withStore: false)
        let damaged = try await harness.hrmctl(["replay", "--store", other, corrupt], withStore: false)
        #expect(damaged.exitCode == 65)
        #expect(damaged.stderr.contains("corrupt.btsnoop: record \(record): corrupt length"), "\(damaged.stderr)")
        let stored = try await harness.hrmctl(["samples", "--store", other, "--output", "json"], withStore: false)
        #expect(stored.stdout.split(separator: "\n").count == 5, "the notifications at +5 … +9 s: \(stored.stdout)")
    }

    /// The number and offset of the first record captured at or after `time`.
    static func record(after time: Int64, in bytes: [UInt8]) throws -> (number: Int, offset: Int) {
        let records = CaptureBuilder.records(in: bytes)
        let index = try #require(records.firstIndex { $0.unixMicroseconds >= time })
        return (index + 1, records[index].offset)
    }

    @Test("a capture that began after the discovery: the guess is told; --handle names the handle; a bad handle is a usage error")
    func withoutDiscovery() async throws {
        let harness = try Harness()
        _ = try await harness.hrmctl("auth", "grant", "hrmd", "heart-rate")
        let strap = StrapCapture.lateStart(datalink: .uart)
        let late = try write(harness, "late.btsnoop", strap.capture())
        let guessed = try await replay(harness, [late])
        #expect(guessed.exitCode == 0, "\(guessed.stderr)")
        #expect(guessed.stderr.contains("late.btsnoop: connection 0x0040 (hci-conn-0x0040): the capture holds no GATT discovery of handle 0x000a"))
        #expect(guessed.stderr.contains("its samples are stored under the device hci-conn-0x0040"))
        let samples = try await harness.samples()
        #expect(samples.count == strap.notificationCount)
        #expect((samples.first?["device"] as? [String: Any])?["identifier"] as? String == "hci-conn-0x0040")

        let named = try await replay(harness, ["--handle", "0x000a", late])
        #expect(named.exitCode == 0 && named.stdout.contains("; 0 samples stored;"))
        #expect(!named.stderr.contains("no GATT discovery"), "\(named.stderr)")

        let bad = try await replay(harness, ["--handle", "0x10000", late])
        #expect(bad.exitCode == 64)
        #expect(bad.stderr.contains("--handle"))
        let help = try await harness.hrmctl(["replay", "--help"], withStore: false)
        #expect(help.stdout.contains("btsnoop") && help.stdout.contains("--handle <handle>"))
    }

    @Test("hrmd --sensor replay:FILE,handle=H plays a capture through the daemon")
    func daemonReplay() async throws {
        let harness = try Harness()
        _ = try await harness.hrmctl("auth", "grant", "hrmd", "heart-rate")
        var strap = StrapCapture(datalink: .monitor)
        strap.includesDiscovery = false
        strap.notificationCount = 3
        strap.firstNotificationDelay = 1_000_000
        let capture = try write(harness, "short.btsnoop", strap.capture())
        // Paced in real time (three notifications a second apart); wait, bounded, until all are stored.
        let daemon = try harness.startDaemon(["--sensor", "replay:\(capture),handle=0x000a"])
        try await eventually("the capture's three heart rates are stored") {
            try await harness.samples().count == 3
        }
        daemon.send(SIGTERM)
        #expect(try await daemon.wait() == .exited(0), "\(daemon.standardError)")
        let samples = try await harness.samples()
        #expect(samples.compactMap { $0["value"] as? Double } == strap.measurements.map { Double($0.heartRate) })
        #expect((samples.first?["device"] as? [String: Any])?["identifier"] as? String == "C8:3F:41:0A:9B:27")
        #expect(!daemon.standardError.contains("no GATT discovery"), "the handle was named")
    }
}
