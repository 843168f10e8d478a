import Foundation
import TestSupport
import Testing

@Suite("events end to end: found in what is stored, live and replayed alike")
struct EventEndToEndTests {
    /// The events a store holds, as `hrmctl events --output json` prints them, oldest first.
    static func events(_ harness: Harness, store: String) async throws -> [[String: Any]] {
        let result = try await harness.hrmctl(["events", "--output", "json", "--store", store], withStore: false)
        #expect(result.exitCode == 0, "\(result.stderr)")
        return result.stdout.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
            .reversed()
    }

    /// An event as both runs must agree on it: an open one's latest reading is where a replay,
    /// which ends with its recording, closes it.
    static func comparable(_ event: [String: Any]) -> String {
        let metadata = event["metadata"] as? [String: Any] ?? [:]
        return [
            event["id"], event["type"], event["device"], event["start"], event["end"] ?? event["latest"], metadata["threshold"],
            metadata["extreme"],
        ].map { "\($0 ?? "-")" }.joined(separator: " ")
    }

    static func grantEvents(_ harness: Harness, store: String) async throws {
        let granted = try await harness.hrmctl(
            ["auth", "grant", "hrmd", "heart-rate", "high-heart-rate-event", "low-heart-rate-event", "sensor-contact-lost", "--store", store],
            withStore: false)
        #expect(granted.exitCode == 0, "\(granted.stderr)")
    }

    /// 2026-11-20 10:00:00 UTC, where the synthetic traces start.
    static let traceStart = Date(timeIntervalSince1970: 1_795_168_800)

    /// A trace of one strap's notifications at 1 Hz from `start`: `(bpm, contact)` each.
    static func trace(_ readings: [(bpm: Int, contact: Bool)], from start: Date = traceStart) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        var lines = [#"{"format":"hrmd-trace","version":1}"#]
        for (second, reading) in readings.enumerated() {
            // Flags: contact supported (0x04), detected (0x02); an 8-bit value.
            let flags = reading.contact ? "06" : "04"
            let time = formatter.string(from: start.addingTimeInterval(Double(second)))
            lines.append(
                #"{"t":"\#(time)","transport":"ble","device":"AA:BB:CC:DD:EE:FF","kind":"notify","characteristic":"2a37","value":"\#(flags)\#(String(format: "%02x", reading.bpm))"}"#)
        }
        return lines.joined(separator: "\n") + "\n"
    }

    @Test("hrmctl watch --type tells each event of the type as it opens and ends, once, from the moment it follows")
    func watchTellsEvents() async throws {
        let harness = try Harness()
        let config = harness.directory.file("hrmd.conf")
        try "[alerts]\nhigh = 120\nhigh-for = 10s\n".write(toFile: config, atomically: true, encoding: .utf8)
        _ = try await harness.hrmctl("auth", "grant", "hrmd", "heart-rate")
        try await Self.grantEvents(harness, store: harness.store)
        let watch = try ChildProcess(
            BuiltProducts.hrmctl,
            ["watch", "--type", "high-heart-rate-event", "--output", "table", "--interval", "0.05", "--store", harness.store, "--duration", "600"],
            environment: harness.environment, outputDirectory: harness.directory.path)
        defer { watch.send(SIGTERM) }
        // The header comes once the events as they are were read: what is saved after it is news.
        try await eventually("the watch's header") { watch.standardOutput.hasPrefix("TIME  EVENT  CHANGE  WHO  DETAILS\n") }
        // A strap's readings around now: 20 s at 80, 30 s at 130 (a high event), 10 s at 80.
        let readings = (0..<60).map { second in (bpm: (20..<50).contains(second) ? 130 : 80, contact: true) }
        let trace = harness.directory.file("now.trace.jsonl")
        try Self.trace(readings, from: Date().addingTimeInterval(-20)).write(toFile: trace, atomically: true, encoding: .utf8)
        let replayed = try await harness.hrmctl(["replay", "--config", config, "--store", harness.store, trace], withStore: false)
        #expect(replayed.exitCode == 0, "\(replayed.stderr)")
        try await eventually("the event's end in the watch") { watch.standardOutput.contains(" ended after 0:29 ") }
        let told = watch.standardOutput.split(separator: "\n").dropFirst()
        #expect(told.allSatisfy { $0.contains("  high-heart-rate-event  ") && $0.contains("  AA:BB:CC:DD:EE:FF  threshold 120  extreme 130") }, "\(told)")
        #expect(told.filter { $0.contains(" ended after ") }.count == 1, "told once when it ended: \(told)")
        #expect(told.filter { $0.contains(" opened ") }.count <= 1, "told at most once when it opened: \(told)")
        let stored = try await Self.events(harness, store: harness.store)
        #expect(stored.count == 1)
    }

    @Test("a replayed trace makes the events its readings hold by the configured rules, each once however often it is replayed")
    func replayedTrace() async throws {
        let harness = try Harness()
        let config = harness.directory.file("hrmd.conf")
        try "[alerts]\nhigh = 120\nhigh-for = 60s\nlow = 40\nlow-for = 60s\ncontact-lost-for = 30s\n".write(toFile: config, atomically: true, encoding: .utf8)
        _ = try await harness.hrmctl("auth", "grant", "hrmd", "heart-rate")
        try await Self.grantEvents(harness, store: harness.store)
        // 30 s at 80; 90 s above 120 (a high event, extreme 150); 20 s at 80; 59 s above 120
        // (one second short: nothing); 10 s at 80; 40 s without contact (contact lost); 10 s at
        // exactly 120 (not above).
        var readings: [(bpm: Int, contact: Bool)] = Array(repeating: (80, true), count: 30)
        readings += (0..<90).map { (121 + $0 % 30, true) }
        readings += Array(repeating: (80, true), count: 20)
        readings += Array(repeating: (130, true), count: 60)
        readings += Array(repeating: (80, true), count: 10)
        readings += Array(repeating: (80, false), count: 40)
        readings += Array(repeating: (120, true), count: 10)
        let trace = harness.directory.file("session.trace.jsonl")
        try Self.trace(readings).write(toFile: trace, atomically: true, encoding: .utf8)

        let replayed = try await harness.hrmctl(["replay", "--config", config, "--store", harness.store, trace], withStore: false)
        #expect(replayed.exitCode == 0, "\(replayed.stderr)")
        let events = try await Self.events(harness, store: harness.store)
        #expect(events.map { $0["type"] as? String } == ["high-heart-rate-event", "sensor-contact-lost"])
        let high = try #require(events.first)
        #expect(high["start"] as? String == "2026-11-20T10:00:30.000Z")
        #expect(high["end"] as? String == "2026-11-20T10:01:59.000Z", "the run's last reading")
        #expect((high["metadata"] as? [String: Any])?["threshold"] as? Double == 120)
        #expect((high["metadata"] as? [String: Any])?["extreme"] as? Double == 150)
        #expect(high["device"] as? String == "AA:BB:CC:DD:EE:FF")
        let contact = try #require(events.last)
        #expect(contact["start"] as? String == "2026-11-20T10:03:30.000Z")
        #expect(contact["end"] as? String == "2026-11-20T10:04:09.000Z")

        let again = try await harness.hrmctl(["replay", "--config", config, "--store", harness.store, trace], withStore: false)
        #expect(again.exitCode == 0)
        #expect(try await Self.events(harness, store: harness.store).map(Self.comparable) == events.map(Self.comparable))

        // Without authorization of an event type, its events are not stored; the others are.
        let fresh = harness.directory.file("fresh.sqlite")
        _ = try await harness.hrmctl(["auth", "grant", "hrmd", "heart-rate", "sensor-contact-lost", "--store", fresh], withStore: false)
        let partly = try await harness.hrmctl(["replay", "--config", config, "--store", fresh, trace], withStore: false)
        #expect(partly.exitCode == 0, "\(partly.stderr)")
        #expect(try await Self.events(harness, store: fresh).map { $0["type"] as? String } == ["sensor-contact-lost"])
        // An application cannot be granted to write events.
        let refused = try await harness.hrmctl("auth", "grant", "mary/app", "high-heart-rate-event")
        #expect(refused.exitCode != 0 && refused.stderr.contains("written by hrmd alone"), "\(refused.stderr)")
    }

    @Test("a strap away longer than disconnected-for is a strap-disconnected event from its drop to its return; a short drop is not")
    func strapDisconnected() async throws {
        let harness = try Harness()
        let config = harness.directory.file("hrmd.conf")
        try "[alerts]\ndisconnected-for = 30s\n".write(toFile: config, atomically: true, encoding: .utf8)
        _ = try await harness.hrmctl("auth", "grant", "hrmd", "heart-rate", "strap-disconnected")
        func link(_ kind: String, _ second: Int) -> String {
            let time = ISO8601DateFormatter().string(from: Self.traceStart.addingTimeInterval(Double(second)))
            return #"{"t":"\#(time)","transport":"ble","device":"AA:BB:CC:DD:EE:FF","kind":"\#(kind)"}"#
        }
        // Away 10 s at 10:00:20, then 45 s at 10:01:00; gone for good at 10:03:00.
        var lines = Self.trace(Array(repeating: (80, true), count: 5)).split(separator: "\n").map(String.init)
        lines += [link("disconnected", 20), link("connected", 30), link("disconnected", 60), link("connected", 105), link("disconnected", 180)]
        let trace = harness.directory.file("links.trace.jsonl")
        try (lines.joined(separator: "\n") + "\n").write(toFile: trace, atomically: true, encoding: .utf8)
        for _ in 0..<2 {
            let replayed = try await harness.hrmctl(["replay", "--config", config, "--store", harness.store, trace], withStore: false)
            #expect(replayed.exitCode == 0, "\(replayed.stderr)")
        }
        let listed = try await harness.hrmctl(["events", "--type", "strap-disconnected", "--output", "json", "--store", harness.store], withStore: false)
        let events = listed.stdout.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        #expect(events.count == 1, "\(listed.stdout)")
        #expect(events.first?["start"] as? String == "2026-11-20T10:01:00.000Z")
        #expect(events.first?["end"] as? String == "2026-11-20T10:01:45.000Z")
        #expect((events.first?["metadata"] as? [String: Any])?["threshold"] as? Double == 30)
    }

    @Test("hrmctl delete --event removes one event, asked to confirm; a replay of its recording brings it back")
    func deleteAnEvent() async throws {
        let harness = try Harness()
        let config = harness.directory.file("hrmd.conf")
        try "[alerts]\nhigh = 120\nhigh-for = 10s\n".write(toFile: config, atomically: true, encoding: .utf8)
        _ = try await harness.hrmctl("auth", "grant", "hrmd", "heart-rate")
        try await Self.grantEvents(harness, store: harness.store)
        let readings = (0..<60).map { second in (bpm: (10..<30).contains(second) || (40..<55).contains(second) ? 130 : 80, contact: true) }
        let trace = harness.directory.file("two.trace.jsonl")
        try Self.trace(readings).write(toFile: trace, atomically: true, encoding: .utf8)
        #expect(try await harness.hrmctl(["replay", "--config", config, "--store", harness.store, trace], withStore: false).exitCode == 0)
        let events = try await Self.events(harness, store: harness.store)
        #expect(events.count == 2)
        let first = try #require(events.first?["id"] as? String)
        let unconfirmed = try await harness.hrmctl(["delete", "--event", first, "--store", harness.store], withStore: false)
        #expect(unconfirmed.exitCode == 64 && unconfirmed.stderr.contains("pass --yes"), "\(unconfirmed.stderr)")
        let deleted = try await harness.hrmctl(["delete", "--event", first, "--yes", "--store", harness.store], withStore: false)
        #expect(deleted.exitCode == 0 && deleted.stdout == "deleted the event \(first)\n", "\(deleted.stderr)")
        #expect(try await Self.events(harness, store: harness.store).map { $0["id"] as? String } == [events.last?["id"] as? String])
        let again = try await harness.hrmctl(["delete", "--event", first, "--yes", "--store", harness.store], withStore: false)
        #expect(again.exitCode != 0 && again.stderr.split(separator: "\n").count == 1 && again.stderr.contains("no event"), "\(again.stderr)")
        let both = try await harness.hrmctl(["delete", "--event", first, "--source", "hrmd", "--store", harness.store], withStore: false)
        #expect(both.exitCode == 64)
        #expect(try await harness.hrmctl(["replay", "--config", config, "--store", harness.store, trace], withStore: false).exitCode == 0)
        #expect(try await Self.events(harness, store: harness.store).count == 2)
    }

    @Test("a wearer's own thresholds override [alerts] while the strap is theirs, and the event names them")
    func personalThresholds() async throws {
        let harness = try Harness()
        _ = try await harness.hrmctl("auth", "grant", "hrmd", "heart-rate")
        try await Self.grantEvents(harness, store: harness.store)
        let store = ["--store", harness.store]
        #expect(try await harness.hrmctl(["person", "add", "ann", "--alert-high", "125"] + store, withStore: false).exitCode == 0)
        let absurd = try await harness.hrmctl(["person", "set", "ann", "--alert-high", "400"] + store, withStore: false)
        #expect(absurd.exitCode != 0 && absurd.stderr.contains("high alert"), "\(absurd.stderr)")
        // ann wears the strap for the first six minutes only.
        #expect(try await harness.hrmctl(
            ["person", "assign", "ann", "AA:BB:CC:DD:EE:FF", "--from", "2026-11-20T09:00:00Z", "--until", "2026-11-20T10:06:00Z"] + store,
            withStore: false).exitCode == 0)
        let listed = try await harness.hrmctl(["person", "list", "--output", "json"] + store, withStore: false)
        #expect(listed.stdout.contains(#""alertHigh":125"#), "\(listed.stdout)")
        // Four minutes at 122 while ann wears it (above the default 120, not her 125), then 90 s
        // at 130 (her event) and 30 s at 80; after her, 11 minutes at 122 (the default rule: an
        // event of nobody's).
        var readings: [(bpm: Int, contact: Bool)] = Array(repeating: (122, true), count: 240)
        readings += Array(repeating: (130, true), count: 90)
        readings += Array(repeating: (80, true), count: 30)
        readings += Array(repeating: (122, true), count: 660)
        let trace = harness.directory.file("ann.trace.jsonl")
        try Self.trace(readings).write(toFile: trace, atomically: true, encoding: .utf8)
        let config = harness.directory.file("hrmd.conf")
        try "[alerts]\nhigh-for = 60s\n".write(toFile: config, atomically: true, encoding: .utf8)
        let replayed = try await harness.hrmctl(["replay", "--config", config, "--store", harness.store, trace], withStore: false)
        #expect(replayed.exitCode == 0, "\(replayed.stderr)")
        let events = try await Self.events(harness, store: harness.store)
        #expect(events.count == 2, "\(events)")
        #expect(events.first?["person"] as? String == "ann")
        #expect((events.first?["metadata"] as? [String: Any])?["threshold"] as? Double == 125)
        #expect(events.first?["start"] as? String == "2026-11-20T10:04:00.000Z")
        #expect(events.last?["person"] == nil)
        #expect((events.last?["metadata"] as? [String: Any])?["threshold"] as? Double == 120)
        #expect(events.first?["end"] as? String == "2026-11-20T10:05:29.000Z")
        #expect(events.last?["start"] as? String == "2026-11-20T10:06:00.000Z")
    }

    @Test("live, stopped and started again, hrmd finds the events a replay of its traces finds: an open event is continued, not doubled")
    func liveEqualsReplay() async throws {
        let harness = try Harness()
        let config = harness.directory.file("hrmd.conf")
        // The mock's heart rate (90 at rest, never under 30) is always above 45.
        try "[hrmd]\nflush-interval = 0.1\n[alerts]\nhigh = 45\nhigh-for = 1s\nlow = 20\n".write(toFile: config, atomically: true, encoding: .utf8)
        _ = try await harness.hrmctl("auth", "grant", "hrmd", "heart-rate")
        try await Self.grantEvents(harness, store: harness.store)
        let traces = harness.directory.file("traces")
        try FileManager.default.createDirectory(atPath: traces, withIntermediateDirectories: false)
        for run in 0..<2 {
            let before = try DaemonEndToEndTests.recordedFrames(in: traces)
            let daemon = try harness.startDaemon(["--config", config, "--record", traces, "--sensor", "mock:bpm=90,hz=5,contact-loss=0"])
            // Two seconds of readings (an event opens after one); hrmd's stop then saves where
            // the open event has got to.
            try await eventually("run \(run): 10 readings recorded") { try DaemonEndToEndTests.recordedFrames(in: traces) >= before + 10 }
            daemon.send(SIGTERM)
            #expect(try await daemon.wait() == .exited(0), "\(daemon.standardError)")
            let events = try await Self.events(harness, store: harness.store)
            #expect(events.last?["end"] == nil && events.last?["latest"] != nil, "run \(run) leaves its event open: \(events)")
        }
        let live = try await Self.events(harness, store: harness.store)
        #expect(live.filter { $0["end"] == nil }.count == 1, "one event lasts: \(live)")

        let fresh = harness.directory.file("fresh.sqlite")
        _ = try await harness.hrmctl(["auth", "grant", "hrmd", "heart-rate", "--store", fresh], withStore: false)
        try await Self.grantEvents(harness, store: fresh)
        let files = try FileManager.default.contentsOfDirectory(atPath: traces).sorted().map { "\(traces)/\($0)" }
        #expect(files.count == 2)
        let replayed = try await harness.hrmctl(["replay", "--config", config, "--store", fresh] + files, withStore: false)
        #expect(replayed.exitCode == 0, "\(replayed.stderr)")
        let fromReplay = try await Self.events(harness, store: fresh)
        #expect(fromReplay.map(Self.comparable) == live.map(Self.comparable))
        #expect(fromReplay.allSatisfy { $0["end"] != nil }, "a replay closes what lasts at its recording's end")
    }
}
