import Foundation
import TestSupport
import Testing

@Suite("daily and workout figures end to end: resting heart rate, recovery and SDNN from a replayed day")
struct FigureEndToEndTests {
    static let device = "AA:BB:CC:DD:EE:FF"
    static let figureTypes = ["resting-heart-rate", "heart-rate-recovery-one-minute", "heart-rate-variability-sdnn"]

    /// 100 minutes from 2026-11-20 10:00:00 UTC at 1 Hz, each notification with one RR
    /// interval alternating 1004/1024 s and 1044/1024 s: 64 count/min for 30 minutes, 150 in
    /// the workout 10:30–10:40, 120 for five minutes after it, 50 until 11:10 (inside the
    /// 30 minutes after the workout: not rest) and 56 to the end.
    static func dayTrace() -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        var lines = [#"{"format":"hrmd-trace","version":1}"#]
        for second in 0..<6000 {
            let bpm = switch second {
            case ..<1800: 64
            case ..<2400: 150
            case ..<2700: 120
            case ..<4200: 50
            default: 56
            }
            let rr = second % 2 == 0 ? 1004 : 1044
            // Flags: RR present (0x10), contact supported and detected (0x06); an 8-bit value.
            let value = String(format: "16%02x%02x%02x", bpm, rr & 0xff, rr >> 8)
            let time = formatter.string(from: EventEndToEndTests.traceStart.addingTimeInterval(Double(second)))
            lines.append(
                #"{"t":"\#(time)","transport":"ble","device":"\#(device)","kind":"notify","characteristic":"2a37","value":"\#(value)"}"#)
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// The samples of `type` in `store`, as `hrmctl samples --output json` prints them.
    static func samples(_ harness: Harness, _ type: String, store: String) async throws -> [[String: Any]] {
        let result = try await harness.hrmctl(
            ["samples", "--type", type, "--since", "2026-11-19T00:00:00Z", "--output", "json", "--limit", "1000", "--store", store],
            withStore: false)
        #expect(result.exitCode == 0, "\(result.stderr)")
        return result.stdout.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }

    @Test("a replayed day gives its wearer's resting heart rate outside the workout and the half hour after, the workout's recovery and each window's SDNN, once however often it is replayed")
    func replayedDay() async throws {
        let harness = try Harness()
        let store = ["--store", harness.store]
        func run(_ arguments: [String]) async throws -> CommandResult { try await harness.hrmctl(arguments + store, withStore: false) }
        func run(_ arguments: String...) async throws -> CommandResult { try await run(arguments) }
        #expect(try await run(["auth", "grant", "hrmd", "heart-rate", "rr-interval"] + Self.figureTypes).exitCode == 0)
        #expect(try await run("person", "add", "ann").exitCode == 0)
        #expect(try await run("person", "assign", "ann", Self.device, "--from", "2026-11-20T09:00:00Z").exitCode == 0)
        let started = try await run("workout", "start", "--person", "ann", "--activity", "running", "--at", "2026-11-20T10:30:00Z")
        #expect(started.exitCode == 0, "\(started.stderr)")
        let workout = try #require(started.stdout.split(separator: "\n").last.map(String.init))
        #expect(try await run("workout", "end", workout, "--at", "2026-11-20T10:40:00Z").exitCode == 0)

        let trace = harness.directory.file("day.trace.jsonl")
        try Self.dayTrace().write(toFile: trace, atomically: true, encoding: .utf8)
        let replayed = try await run("replay", trace)
        #expect(replayed.exitCode == 0, "\(replayed.stderr)")

        // Rest: 10:00–10:30 at 64 and 11:10–11:40 at 56, twelve windows; the 50 after the
        // workout is not rest.
        let resting = try await Self.samples(harness, "resting-heart-rate", store: harness.store)
        #expect(resting.count == 1, "\(resting)")
        #expect(resting.first?["value"] as? Double == 56)
        #expect(resting.first?["person"] as? String == "ann")
        #expect(resting.first?["start"] as? String == "2026-11-20T11:10:00.000Z", "the first window at the lowest level")
        // Recovery: 150 at the end, 120 a minute later.
        let recovery = try await Self.samples(harness, "heart-rate-recovery-one-minute", store: harness.store)
        #expect(recovery.map { $0["value"] as? Double } == [30], "\(recovery)")
        #expect(recovery.first?["start"] as? String == "2026-11-20T10:40:00.000Z")
        #expect(recovery.first?["person"] as? String == "ann")
        // SDNN: twenty 5-minute windows of alternating intervals, 19.53 ms either side of 1005 ms.
        let sdnn = try await Self.samples(harness, "heart-rate-variability-sdnn", store: harness.store)
        #expect(sdnn.count == 20, "\(sdnn.count) windows")
        #expect(sdnn.allSatisfy { (19.5...19.7).contains($0["value"] as? Double ?? 0) }, "\(sdnn.map { $0["value"] ?? "-" })")
        #expect(sdnn.first?["unit"] as? String == "ms")

        // The day's figure reads as statistics by day.
        let stats = try await run("stats", "--type", "resting-heart-rate", "--by", "1d", "--since", "2026-11-20T00:00:00Z",
                                  "--until", "2026-11-21T00:00:00Z", "--output", "json")
        #expect(stats.exitCode == 0, "\(stats.stderr)")
        #expect(stats.stdout.contains(#""avg":56"#), "\(stats.stdout)")

        // Replayed again: nothing new.
        let again = try await run("replay", trace)
        #expect(again.exitCode == 0, "\(again.stderr)")
        #expect(try await Self.samples(harness, "resting-heart-rate", store: harness.store).count == 1)
        #expect(try await Self.samples(harness, "heart-rate-recovery-one-minute", store: harness.store).count == 1)
        #expect(try await Self.samples(harness, "heart-rate-variability-sdnn", store: harness.store).count == 20)
    }

    @Test("figures are hrmd's alone: stored only with its grant (the rest still stored), and no application may be granted to write them")
    func authorization() async throws {
        let harness = try Harness()
        let fresh = harness.directory.file("fresh.sqlite")
        let store = ["--store", fresh]
        #expect(try await harness.hrmctl(["auth", "grant", "hrmd", "heart-rate", "rr-interval", "heart-rate-variability-sdnn"] + store,
                                          withStore: false).exitCode == 0)
        let trace = harness.directory.file("day.trace.jsonl")
        try Self.dayTrace().write(toFile: trace, atomically: true, encoding: .utf8)
        let replayed = try await harness.hrmctl(["replay", trace] + store, withStore: false)
        #expect(replayed.exitCode == 0, "\(replayed.stderr)")
        #expect(try await Self.samples(harness, "resting-heart-rate", store: fresh).isEmpty)
        #expect(try await Self.samples(harness, "heart-rate-variability-sdnn", store: fresh).count == 20)
        for type in Self.figureTypes {
            let refused = try await harness.hrmctl(["auth", "grant", "mary/app", type] + store, withStore: false)
            #expect(refused.exitCode != 0 && refused.stderr.contains("written by hrmd alone"), "\(type): \(refused.stderr)")
        }
        #expect(try await harness.hrmctl(["auth", "grant", "mary/app", "resting-heart-rate", "--read"] + store, withStore: false).exitCode == 0)
    }
}
