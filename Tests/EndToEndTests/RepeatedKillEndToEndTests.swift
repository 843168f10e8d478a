import Foundation
import GRDB
import TestSupport
import Testing

@Suite("hrmd killed a hundred times")
struct RepeatedKillEndToEndTests {
    static let kills = 100
    /// Twenty mock straps at 4 Hz: 80 frames a second, 40 in each 0.5 s flush.
    static let straps = (1...20).flatMap { ["--sensor", "mock:hz=4,seed=\($0),id=strap-\($0),contact-loss=0"] }
    static let framesPerFlush = 40

    /// Heart-rate notifications in the traces of `directory`, and how many of them were
    /// received at or after `after` (an RFC 3339 UTC time with six fraction digits, compared as
    /// text, as the traces write theirs); fails the test when a file does not end with a whole
    /// line or holds a line that is not JSON.
    static func recordedHeartRates(in directory: String, after: String) throws -> (all: Int, after: Int) {
        var (count, later) = (0, 0)
        for name in try FileManager.default.contentsOfDirectory(atPath: directory) where name.hasSuffix(".trace.jsonl") {
            let text = try String(contentsOfFile: directory + "/" + name, encoding: .utf8)
            #expect(text.isEmpty || text.hasSuffix("\n"), "\(name) ends inside a line")
            for line in text.split(separator: "\n") {
                let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
                #expect(object != nil, "\(name): not JSON: \(line.prefix(80))")
                guard let object, object["kind"] as? String == "notify", object["characteristic"] as? String == "2a37" else { continue }
                count += 1
                if let time = object["t"] as? String, time >= after { later += 1 }
            }
        }
        return (count, later)
    }

    /// `date` as the traces write times: UTC, six fraction digits (the last three zero).
    static func traceTime(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd'T'HH:mm:ss.SSS'000Z'"
        return formatter.string(from: date)
    }

    @Test("SIGKILL at random moments while 20 straps stream, traces are recorded and readers read: each time the store is intact, keeps what a reader saw, and loses at most the frames of the flush under way")
    func killRepeatedly() async throws {
        let harness = try Harness()
        #expect(try await harness.hrmctl("auth", "grant", "hrmd", "all").exitCode == 0)
        let traces = harness.directory.file("traces")
        try FileManager.default.createDirectory(atPath: traces, withIntermediateDirectories: false)
        // The moments of the kills: 0.3–1.5 s into each run, from a fixed seed.
        var state: UInt64 = 0x2545_F491_4F6C_DD1D
        func nextDelay() -> Duration {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return .milliseconds(300 + Int(state >> 33) % 1200)
        }
        var lostPerKill: [Int] = []
        var (recordedBefore, storedBefore) = (0, 0)
        for kill in 1...Self.kills {
            let runStart = Date()
            // The default flush interval, 0.5 s.
            let daemon = try harness.startDaemon(Self.straps + ["--record", traces])
            try await Task.sleep(for: nextDelay())
            // A reader that saw this run's samples (it may still be reading when the kill comes).
            let since = ISO8601DateFormatter().string(from: runStart.addingTimeInterval(-1))
            let readerStart = Self.traceTime(Date())
            let seen = try await harness.hrmctl(["samples", "--output", "json", "--since", since])
            guard daemon.isRunning else {
                Issue.record("kill \(kill): hrmd had stopped: \(daemon.standardError)")
                return
            }
            daemon.send(SIGKILL)
            #expect(try await daemon.wait() == .signalled(SIGKILL), "kill \(kill): \(daemon.standardError)")

            #expect(try StoreFile.integrityCheck(harness.store) == "ok", "kill \(kill)")
            let after = try await harness.hrmctl(["samples", "--output", "json", "--since", since])
            let missing = Set(seen.stdout.split(separator: "\n")).subtracting(after.stdout.split(separator: "\n"))
            #expect(missing.isEmpty, "kill \(kill): \(missing.count) samples a reader saw are gone, such as \(missing.first ?? "")")

            let (recording, stored) = (try Self.recordedHeartRates(in: traces, after: readerStart), try StoreFile.heartRateCount(harness.store))
            let recorded = recording.all
            let lost = (recorded - recordedBefore) - (stored - storedBefore)
            #expect(lost >= 0, "kill \(kill): more stored than recorded")
            // The flush under way when the kill came and the frames queued for the next: what
            // came while the reader read (a loaded machine makes that longer, and commits
            // slower), and two intervals before it.
            #expect(lost <= 2 * Self.framesPerFlush + recording.after,
                    "kill \(kill): \(lost) recorded frames never stored (\(recording.after) came while the reader read)")
            lostPerKill.append(lost)
            (recordedBefore, storedBefore) = (recorded, stored)
        }
        let total = lostPerKill.reduce(0, +)
        print("""
            repeated kills: \(Self.kills) kills, \(storedBefore) heart-rate samples stored of \(recordedBefore) recorded; \
            lost per kill: mean \(Double(total) / Double(Self.kills)), max \(lostPerKill.max() ?? 0) \
            (one flush interval: \(Self.framesPerFlush) frames)
            """)
    }
}
