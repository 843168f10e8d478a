@preconcurrency import Glibc
import Foundation
import GRDB
import TestSupport
import Testing

/// Long runs of the built hrmd, for `make soak` (HRMD_SOAK_MINUTES sets their length; without
/// it they do not run): resident memory and open descriptors sampled every minute and printed
/// as a curve, and what was stored checked against what was sent.
@Suite("soak", .serialized)
struct SoakEndToEndTests {
    static let minutes: Double? = ProcessInfo.processInfo.environment["HRMD_SOAK_MINUTES"].flatMap(Double.init)

    /// hrmd's resident memory (kB) and open descriptors, each minute.
    struct Curve {
        var points: [(minute: Int, residentKB: Int, descriptors: Int)] = []

        mutating func sample(_ daemon: ChildProcess, minute: Int) {
            let status = (try? String(contentsOfFile: "/proc/\(daemon.pid)/status", encoding: .utf8)) ?? ""
            let resident = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") }
                .flatMap { Int($0.split(separator: " ").dropFirst().first ?? "") } ?? -1
            let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(daemon.pid)/fd").count) ?? -1
            points.append((minute, resident, descriptors))
            print("soak: minute \(minute): RSS \(resident) kB, \(descriptors) descriptors")
        }

        /// The minutes until every open chunk has filled and closed at least once: the store
        /// keeps one open chunk per strap and type in memory (up to `SeriesBlobs.maximumCount`
        /// samples; a heart-rate chunk at 4 Hz closes after about 80 s, an RR chunk after
        /// about 3 minutes), so memory rises to a bound over these minutes by design.
        static let warmUpMinutes = 5

        /// Checks that memory stays flat after the warm-up (under 1 MB above its level at
        /// `warmUpMinutes`) and that no descriptor is added after the first minute; prints the
        /// growth after the first minute too.
        func checkFlat() {
            guard let first = points.first(where: { $0.minute >= 1 }),
                let settled = points.first(where: { $0.minute >= Self.warmUpMinutes }), let last = points.last,
                last.minute > settled.minute
            else {
                Issue.record("too short to tell: the curve needs more than \(Self.warmUpMinutes) minutes")
                return
            }
            let peak = points.filter { $0.minute >= settled.minute }.map(\.residentKB).max() ?? last.residentKB
            print("""
                soak: RSS \(first.residentKB) kB at minute 1, \(settled.residentKB) kB at minute \(settled.minute), \
                \(last.residentKB) kB at the end, peak \(peak) kB after minute \(settled.minute) \
                (\(peak - first.residentKB) kB above minute 1, \(peak - settled.residentKB) kB above minute \(settled.minute)); \
                descriptors \(first.descriptors) → \(last.descriptors)
                """)
            #expect(peak - settled.residentKB < 1024, "RSS grew by \(peak - settled.residentKB) kB after minute \(settled.minute)")
            #expect(last.descriptors <= first.descriptors, "descriptors grew from \(first.descriptors) to \(last.descriptors)")
        }
    }

    @Test("20 fake BLE straps at 4 Hz, each dropping every few minutes, bluetoothd restarted twice: all sent is stored once; memory and descriptors flat",
          .enabled(if: minutes != nil, "HRMD_SOAK_MINUTES is not set (make soak sets it)"))
    func bleStraps() async throws {
        let minutes = try #require(Self.minutes)
        let harness = try Harness()
        let bus = try await PrivateBus()
        let addresses = (0..<20).map { String(format: "C0:FF:EE:00:01:%02X", $0) }
        // Half on each notify path; links end 150–283 s after each subscription.
        let devices = addresses.enumerated().map { index, address in
            #"{"address": "\#(address)", "name": "Soak \#(index)", "trusted": true, "location": 1, "battery": 80, "auto_stream_hz": 4, "drop_after_s": \#(150 + index * 7), "notify_acquired": \#(index.isMultiple(of: 2))}"#
        }
        let scenario = #"{"adapters": ["hci0"], "devices": [\#(devices.joined(separator: ", "))]}"#
        var fake = try await FakeBlueZ(bus: bus, scenario: scenario, in: harness.directory)
        #expect(try await harness.hrmctl("auth", "grant", "hrmd", "all").exitCode == 0)
        var environment = harness.environment
        environment["DBUS_SYSTEM_BUS_ADDRESS"] = bus.address
        let daemon = try ChildProcess(
            BuiltProducts.hrmd, ["--store", harness.store, "--sensor", "ble"], environment: environment,
            outputDirectory: harness.directory.path)

        var sent: [String: Int] = [:]
        /// Stops every stream (the adapter powers off) and adds what this fake sent.
        func quiesce() async throws {
            try await fake.command("power off")
            try await Task.sleep(for: .seconds(2))
            let stats = try await fake.stats()
            for (address, counters) in stats["devices"] as? [String: [String: Any]] ?? [:] {
                sent[address, default: 0] += counters["sent"] as? Int ?? 0
            }
        }
        var curve = Curve()
        let total = Int(minutes.rounded(.up))
        let restarts = Set([total / 3, 2 * total / 3].filter { $0 > 0 })
        for minute in 0..<total {
            try await Task.sleep(for: .seconds(60))
            curve.sample(daemon, minute: minute + 1)
            #expect(daemon.isRunning, "\(daemon.standardError.suffix(2000))")
            if restarts.contains(minute + 1) {
                try await quiesce()
                fake.kill()
                fake = try await FakeBlueZ(bus: bus, scenario: scenario, in: harness.directory)
                print("soak: minute \(minute + 1): bluetoothd restarted")
            }
        }
        try await quiesce()
        try await Task.sleep(for: .seconds(1))
        daemon.send(SIGTERM)
        #expect(try await daemon.wait() == .exited(0), "\(daemon.standardError.suffix(2000))")
        curve.checkFlat()

        let stored = try DatabaseQueue(path: harness.store).read { db in
            try Row.fetchAll(db, sql: """
                SELECT d.localIdentifier AS device, SUM(s.count) AS count FROM series s JOIN device d ON d.id = s.deviceId
                WHERE s.typeId = 1 GROUP BY d.localIdentifier
                """)
        }
        var storedByStrap: [String: Int] = [:]
        for row in stored { storedByStrap[row["device"]] = row["count"] }
        for address in addresses {
            #expect(storedByStrap[address, default: 0] == sent[address, default: 0], "\(address): stored \(storedByStrap[address, default: 0]) of \(sent[address, default: 0]) sent")
        }
        print("soak: \(sent.values.reduce(0, +)) notifications sent, \(storedByStrap.values.reduce(0, +)) heart-rate samples stored")
        #expect(try StoreFile.integrityCheck(harness.store) == "ok")
        fake.kill()
    }

    @Test("20 mock straps at 4 Hz with hrmctl readers polling: memory and descriptors flat",
          .enabled(if: minutes != nil, "HRMD_SOAK_MINUTES is not set (make soak sets it)"))
    func mockStraps() async throws {
        let minutes = try #require(Self.minutes)
        let harness = try Harness()
        #expect(try await harness.hrmctl("auth", "grant", "hrmd", "all").exitCode == 0)
        let straps = (1...20).flatMap { ["--sensor", "mock:hz=4,seed=\($0),contact-loss=0"] }
        let daemon = try harness.startDaemon(straps)
        var curve = Curve()
        let end = ContinuousClock.now.advanced(by: .seconds(minutes * 60))
        var nextSample = ContinuousClock.now.advanced(by: .seconds(60))
        var minute = 0
        while ContinuousClock.now < end {
            // A reader polling the last minute, as a dashboard would.
            let read = try await harness.hrmctl(["samples", "--since", "1m", "--output", "json"])
            #expect(read.exitCode == 0, "\(read.stderr)")
            try await Task.sleep(for: .seconds(2))
            if ContinuousClock.now >= nextSample {
                minute += 1
                curve.sample(daemon, minute: minute)
                nextSample = nextSample.advanced(by: .seconds(60))
            }
        }
        #expect(daemon.isRunning, "\(daemon.standardError.suffix(2000))")
        daemon.send(SIGTERM)
        #expect(try await daemon.wait() == .exited(0), "\(daemon.standardError.suffix(2000))")
        curve.checkFlat()
        #expect(try StoreFile.integrityCheck(harness.store) == "ok")
    }
}
