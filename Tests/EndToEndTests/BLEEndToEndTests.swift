@preconcurrency import Glibc
import Foundation
import TestSupport
import Testing

private let a = "AA:BB:CC:DD:EE:01"
private let b = "AA:BB:CC:DD:EE:02"
private let c = "AA:BB:CC:DD:EE:03"

private func strap(_ address: String, _ extra: String = "") -> String {
    #"{"address": "\#(address)", "name": "Strap \#(address.suffix(2))", "trusted": true, "location": 1, "battery": 87, "manufacturer": "Polar Electro Oy", "model": "H10", "firmware": "3.1.1", "notify_acquired": true\#(extra)}"#
}

private func scenario(_ devices: String...) -> String {
    #"{"adapters": ["hci0"], "devices": [\#(devices.joined(separator: ", "))]}"#
}

/// The built hrmd reading BLE straps from the fake bluetoothd on a private system bus.
@Suite("hrmd with BLE straps through the fake bluetoothd", .serialized, .timeLimit(.minutes(3)))
struct BLEEndToEndTests {
    private final class Setup: @unchecked Sendable {
        let harness: Harness
        let bus: PrivateBus
        var fake: FakeBlueZ
        let scenario: String

        init(_ scenario: String) async throws {
            harness = try Harness()
            bus = try await PrivateBus()
            self.scenario = scenario
            fake = try await FakeBlueZ(bus: bus, scenario: scenario, in: harness.directory)
            let grant = try await harness.hrmctl("auth", "grant", "hrmd", "all")
            #expect(grant.exitCode == 0, "\(grant.stderr)")
        }

        func startDaemon(_ arguments: [String]) throws -> ChildProcess {
            var environment = harness.environment
            environment["DBUS_SYSTEM_BUS_ADDRESS"] = bus.address
            return try ChildProcess(
                BuiltProducts.hrmd, ["--store", harness.store, "--log-level", "debug"] + arguments,
                environment: environment, outputDirectory: harness.directory.path)
        }

        func subscribed(_ address: String) async throws -> Bool {
            try await fake.stats(address)["subscribed"] as? Bool == true
        }

        func samples(of address: String) async throws -> [[String: Any]] {
            try await harness.samples().filter { ($0["device"] as? [String: Any])?["identifier"] as? String == address }
        }

        func values(of address: String) async throws -> [Double] {
            try await samples(of: address).compactMap { $0["value"] as? Double }
        }

        func stop(_ daemon: ChildProcess) async throws {
            daemon.send(SIGTERM)
            let termination = try await daemon.wait()
            #expect(termination == .exited(0), "\(daemon.standardError)")
        }
    }

    @Test("a listed strap: location from 0x2A38, device information, samples through AcquireNotify")
    func firstSampleWithLocationAndDeviceInformation() async throws {
        let setup = try await Setup(scenario(strap(a)))
        let daemon = try setup.startDaemon(["--sensor", "ble:\(a)"])
        try await eventually("subscribed") { try await setup.subscribed(a) }
        try await setup.fake.command("notify \(a) 0048")
        try await setup.fake.command("notify \(a) 0049")
        try await eventually("two samples stored") { try await setup.values(of: a) == [72, 73] }
        let sample = try #require(try await setup.samples(of: a).first)
        #expect((sample["metadata"] as? [String: Any])?["sensorLocation"] as? String == "chest")
        let devices = try await setup.harness.hrmctl(["devices", "--output", "json", "--store", setup.harness.store], withStore: false)
        #expect(devices.stdout.contains("Polar Electro Oy") && devices.stdout.contains("H10"), "\(devices.stdout)")
        #expect(devices.stdout.contains(#""battery":87"#) || devices.stdout.contains(#""battery": 87"#), "\(devices.stdout)")
        #expect(try await setup.fake.stats(a)["acquire_notify_calls"] as? Int == 1)
        try await setup.stop(daemon)
    }

    @Test("StartNotify path; a drop mid-stream reconnects with no duplicate and no lost sample")
    func startNotifyAndReconnect() async throws {
        let setup = try await Setup(scenario(strap(a, #", "notify_acquired": false"#)))
        let daemon = try setup.startDaemon(["--sensor", "ble:\(a)"])
        try await eventually("subscribed") { try await setup.subscribed(a) }
        try await setup.fake.command("notify \(a) 0050")
        try await eventually("first sample") { try await setup.values(of: a) == [80] }
        try await setup.fake.command("drop \(a)")
        try await eventually("reconnected") {
            let stats = try await setup.fake.stats(a)
            return stats["subscribed"] as? Bool == true && stats["connects"] as? Int == 2
        }
        try await setup.fake.command("notify \(a) 0051")
        try await eventually("the post-reconnect sample") { try await setup.values(of: a) == [80, 81] }
        try await setup.stop(daemon)
        #expect(try await setup.values(of: a) == [80, 81])
        #expect(try await setup.fake.stats(a)["start_notify_calls"] as? Int == 2)
    }

    @Test("bluetoothd restarts: hrmd waits, then reconnects to the new one")
    func bluetoothdRestart() async throws {
        let setup = try await Setup(scenario(strap(a)))
        let daemon = try setup.startDaemon(["--sensor", "ble:\(a)"])
        try await eventually("subscribed") { try await setup.subscribed(a) }
        setup.fake.kill()
        // A negative check, made once hrmd has noticed and flushed since.
        try await eventually("hrmd notices bluetoothd is gone") { daemon.standardError.contains("bluetoothd not running") }
        try await daemon.waitForFlushes(1, after: daemon.flushes, "bluetoothd went")
        #expect(daemon.isRunning)
        setup.fake = try await FakeBlueZ(bus: setup.bus, scenario: setup.scenario, in: setup.harness.directory)
        try await eventually("subscribed again") { try await setup.subscribed(a) }
        try await setup.fake.command("notify \(a) 0052")
        try await eventually("a sample after the restart") { try await setup.values(of: a) == [82] }
        try await setup.stop(daemon)
        #expect(daemon.standardError.contains("bluetoothd not running"), "\(daemon.standardError)")
    }

    @Test("two trusted straps at once; an untrusted one ignored; malformed frames disturb no other strap")
    func twoStrapsUntrustedAndMalformed() async throws {
        let stranger = #"{"address": "\#(c)", "name": "Neighbour", "discoverable": true, "location": 1}"#
        let setup = try await Setup(scenario(strap(a), strap(b, #", "notify_acquired": false"#), stranger))
        let daemon = try setup.startDaemon(["--sensor", "ble"])
        try await eventually("both subscribed") {
            let first = try await setup.subscribed(a)
            let second = try await setup.subscribed(b)
            return first && second
        }
        try await setup.fake.command("malformed \(a) 4")
        try await setup.fake.command("notify \(b) 0060")
        try await setup.fake.command("notify \(a) 0061")
        try await eventually("both stored") {
            let first = try await setup.values(of: a)
            let second = try await setup.values(of: b)
            return first.contains(97) && second == [96]
        }
        #expect(try await setup.fake.stats(c)["connect_calls"] as? Int == 0)
        #expect(try await setup.samples(of: c).isEmpty)
        try await setup.stop(daemon)
    }

    @Test("twenty straps, half through AcquireNotify and half through StartNotify: each stores exactly what it sent, in order")
    func twentyStrapsBothNotifyPaths() async throws {
        let addresses = (0..<20).map { String(format: "C0:FF:EE:00:00:%02X", $0) }
        let devices = addresses.enumerated().map { index, address in
            strap(address, index.isMultiple(of: 2) ? "" : #", "notify_acquired": false"#)
        }
        let setup = try await Setup(#"{"adapters": ["hci0"], "devices": [\#(devices.joined(separator: ", "))]}"#)
        let daemon = try setup.startDaemon(["--sensor", "ble"])
        try await eventually("all subscribed") {
            try await setup.fake.stats()["subscribed"] as? Int == addresses.count
        }
        /// The bpm of the `round`-th notification of strap `index`: distinct across straps and rounds.
        func bpm(_ index: Int, _ round: Int) -> Int { 50 + index * 5 + round }
        let rounds = 5
        for round in 0..<rounds {
            for (index, address) in addresses.enumerated() {
                try await setup.fake.command("notify \(address) 00" + String(format: "%02X", bpm(index, round)))
            }
        }
        try await eventually("every notification stored") {
            try await setup.harness.samples().count >= addresses.count * rounds
        }
        for (index, address) in addresses.enumerated() {
            #expect(try await setup.values(of: address) == (0..<rounds).map { Double(bpm(index, $0)) }, "\(address)")
        }
        #expect(try await setup.harness.samples().count == addresses.count * rounds)
        #expect(try await setup.fake.stats()["acquire_notify_calls"] as? Int == addresses.count / 2)
        try await setup.stop(daemon)
    }

    @Test("five drops and reconnects leak no descriptor and no match rule, and lose or repeat no sample")
    func reconnectsLeakNothing() async throws {
        let setup = try await Setup(scenario(strap(a)))
        let daemon = try setup.startDaemon(["--sensor", "ble:\(a)"])
        try await eventually("subscribed") { try await setup.subscribed(a) }
        try await setup.fake.command("notify \(a) 0040")
        try await eventually("first sample") { try await setup.values(of: a) == [64] }
        let descriptors = openDescriptors(of: daemon.pid)
        let matches = try await matchRules(on: setup)
        do {
            try await dropFiveTimes(setup)
        } catch {
            Issue.record("hrmd's log:\n\(daemon.standardError)")
            throw error
        }
        #expect(try await setup.values(of: a) == [64, 65, 66, 67, 68, 69])
        #expect(openDescriptors(of: daemon.pid) == descriptors, "open descriptors before and after five reconnects")
        #expect(try await matchRules(on: setup) == matches, "match rules on the bus before and after five reconnects")
        #expect(try await setup.fake.stats(a)["acquire_notify_calls"] as? Int == 6)
        try await setup.stop(daemon)
    }

    private func dropFiveTimes(_ setup: Setup) async throws {
        for round in 1...5 {
            try await setup.fake.command("drop \(a)")
            try await eventually("reconnect \(round)") {
                let stats = try await setup.fake.stats(a)
                return stats["subscribed"] as? Bool == true && stats["connects"] as? Int ?? 0 >= round + 1
            }
            try await setup.fake.command("notify \(a) 00\(String(64 + round, radix: 16))")
            try await eventually("sample \(round)") { try await setup.values(of: a).count == round + 1 }
        }
    }

    private func openDescriptors(of pid: pid_t) -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").count) ?? -1
    }

    /// The bus daemon's count of match rules (every client's), from its statistics interface.
    private func matchRules(on setup: Setup) async throws -> Int {
        let result = try await ChildProcess.run(
            "/usr/bin/dbus-send",
            ["--bus=\(setup.bus.address)", "--print-reply", "--dest=org.freedesktop.DBus", "/org/freedesktop/DBus",
             "org.freedesktop.DBus.Debug.Stats.GetStats"],
            in: setup.harness.directory)
        let lines = result.stdout.split(separator: "\n")
        guard let index = lines.firstIndex(where: { $0.contains(#""MatchRules""#) }), index + 1 < lines.count,
            let count = lines[index + 1].split(separator: " ").last.flatMap({ Int($0) })
        else {
            Issue.record("no MatchRules in the bus statistics: \(result.stdout) \(result.stderr)")
            return -1
        }
        return count
    }

    /// How bluetoothd answers Disconnect in a stop test.
    enum DisconnectAnswer: CaseIterable, CustomTestStringConvertible, Sendable {
        /// At once, as for a strap whose link is already down.
        case atOnce
        /// Never, as for a strap out of range that never acknowledges the end of its link.
        case never

        var scenarioValue: String { self == .never ? #""never""# : "0" }
        var testDescription: String { self == .never ? "bluetoothd never answering Disconnect" : "bluetoothd answering Disconnect at once" }
    }

    /// The longest stop, SIGTERM to exit, the stop tests accept: far below the 25 s that sd-bus
    /// waits for an unanswered call (what a stop took when it waited for Disconnect's answer) and
    /// the 30 s of twenty straps told one after the other, far above the 1.5 s hrmd gives the
    /// straps' Disconnects, all at once, plus the final write on a loaded machine.
    private static let stopBound: Duration = .seconds(10)

    @Test("SIGTERM with twenty straps streaming: hrmd exits within the bound, tells each strap once, stores every notification it received", arguments: DisconnectAnswer.allCases)
    func boundedStop(answer: DisconnectAnswer) async throws {
        let addresses = (0..<20).map { String(format: "C0:FF:EE:00:02:%02X", $0) }
        let devices = addresses.enumerated().map { index, address in
            strap(address, #", "auto_stream_hz": 5, "disconnect_reply_after_s": \#(answer.scenarioValue)"#
                + (index.isMultiple(of: 2) ? "" : #", "notify_acquired": false"#))
        }
        let setup = try await Setup(#"{"adapters": ["hci0"], "devices": [\#(devices.joined(separator: ", "))]}"#)
        // A flush interval far longer than the run: the stop's final write stores what was received.
        let config = setup.harness.directory.file("slow-flush.conf")
        try "[hrmd]\nflush-interval = 60\n".write(toFile: config, atomically: true, encoding: .utf8)
        let traces = setup.harness.directory.file("traces")
        try FileManager.default.createDirectory(atPath: traces, withIntermediateDirectories: false)
        let daemon = try setup.startDaemon(["--config", config, "--sensor", "ble", "--record", traces])
        try await eventually("every strap streaming") {
            let stats = try await setup.fake.stats()
            let sent = (stats["devices"] as? [String: [String: Any]] ?? [:]).values.map { $0["sent"] as? Int ?? 0 }
            return stats["subscribed"] as? Int == addresses.count && sent.count == addresses.count && sent.allSatisfy { $0 >= 10 }
        }

        daemon.send(SIGTERM)
        let signalled = ContinuousClock.now
        let termination = try await daemon.wait()
        let stopTook = signalled.duration(to: .now)
        print("stop with \(addresses.count) straps and \(answer.testDescription): SIGTERM to exit \(stopTook)")
        let log = daemon.standardError
        #expect(termination == .exited(0), "\(log)")
        #expect(stopTook < Self.stopBound, "SIGTERM to exit took \(stopTook)")

        let stats = try await setup.fake.stats()["devices"] as? [String: [String: Any]] ?? [:]
        let received = try Self.recordedHeartRates(in: traces)
        var storedInAll = 0
        for address in addresses {
            #expect(stats[address]?["disconnect_calls"] as? Int == 1, "\(address): Disconnect called once at stop")
            let told = answer == .never ? "\(address): no answer to Disconnect within 1.5 s; leaving it to bluetoothd"
                : "\(address): disconnected at stop"
            #expect(log.contains(told), "\(told): \(log)")
            // The fake's measurements count up from 60 bpm, so what hrmd received is a prefix of what was sent.
            let stored = try await setup.values(of: address).map { Int($0) }
            let generated = (0..<stored.count).map { 60 + $0 % 121 }
            #expect(!stored.isEmpty && stored == received[address], "\(address): stored \(stored), received \(received[address] ?? [])")
            #expect(stored == generated, "\(address): stored \(stored), the fake's first \(stored.count) \(generated)")
            #expect(stored.count <= stats[address]?["sent"] as? Int ?? 0, "\(address): more stored than sent")
            storedInAll += stored.count
        }
        let rrIntervals = try await setup.harness.samples(type: "rr-interval").count
        #expect(log.contains(" \(storedInAll + rrIntervals) samples stored,"), "the final log line counts what the store holds: \(log)")
        #expect(!log.contains("could not write"), "\(log)")
    }

    /// The bpm of each Heart Rate Measurement notification the traces in `directory` recorded
    /// (hrmd records every frame it receives), by device, in the order received.
    private static func recordedHeartRates(in directory: String) throws -> [String: [Int]] {
        var rates: [String: [Int]] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: directory).sorted() where name.hasSuffix(".trace.jsonl") {
            for line in try String(contentsOfFile: directory + "/" + name, encoding: .utf8).split(separator: "\n") {
                guard let event = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                    event["kind"] as? String == "notify", event["characteristic"] as? String == "2a37",
                    let device = event["device"] as? String, let value = event["value"] as? String, value.count >= 4,
                    let bpm = Int(value.dropFirst(2).prefix(2), radix: 16)
                else { continue }
                rates[device, default: []].append(bpm)
            }
        }
        return rates
    }

    @Test("no system bus: hrmd waits it out instead of failing")
    func noSystemBus() async throws {
        let harness = try Harness()
        var environment = harness.environment
        environment["DBUS_SYSTEM_BUS_ADDRESS"] = "unix:path=\(harness.directory.file("no-bus"))"
        let daemon = try ChildProcess(
            BuiltProducts.hrmd, ["--store", harness.store, "--sensor", "ble:\(a)", "--duration", "2"],
            environment: environment, outputDirectory: harness.directory.path)
        #expect(try await daemon.wait() == .exited(0), "\(daemon.standardError)")
        #expect(daemon.standardError.contains("no system bus"), "\(daemon.standardError)")
    }
}
