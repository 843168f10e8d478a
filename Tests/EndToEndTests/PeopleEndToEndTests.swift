import Foundation
import TestSupport
import Testing

@Suite("hrmctl person end to end, on a store file")
struct PeopleEndToEndTests {
    @Test("people are added, assigned straps, listed and removed; samples name whose they are in JSON only")
    func peopleAndSamples() async throws {
        let harness = try Harness()
        let store = ["--store", harness.store]
        func run(_ arguments: String...) async throws -> CommandResult { try await harness.hrmctl(arguments + store) }
        _ = try await run("auth", "grant", "hrmd", "heart-rate")
        let recorded = try await ChildProcess.run(
            BuiltProducts.hrmd, store + ["--sensor", "mock:hz=4,contact-loss=0", "--sensor", "mock:hz=4,contact-loss=0", "--duration", "2"],
            environment: harness.environment, in: harness.directory)
        #expect(recorded.exitCode == 0, "\(recorded.stderr)")

        let added = try await run("person", "add", "ann", "--birth-year", "1990", "--resting-hr", "52")
        #expect(added.exitCode == 0, "\(added.stderr)")
        #expect(try await run("person", "add", "ann").exitCode == 64)
        #expect(try await run("person", "add", "bad\u{1B}[2Jname").exitCode == 64)
        #expect(try await run("person", "add", "cy", "--zones", "90,80,100,110,120").exitCode == 64)
        #expect(try await run("person", "assign", "nobody", "mock-1").exitCode == 64)
        let assigned = try await run("person", "assign", "ann", "mock-1", "--from", "1h")
        #expect(assigned.exitCode == 0, "\(assigned.stderr)")
        #expect(try await run("person", "set", "ann", "--zones", "reserve", "--max-hr", "190").exitCode == 0)

        let listed = try await run("person", "list", "--output", "json")
        let person = try #require(try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [String: Any])
        #expect(person["name"] as? String == "ann")
        #expect(person["zones"] as? String == "reserve")
        #expect(person["zoneBounds"] as? [Double] == [121, 135, 149, 162, 176])
        #expect((person["straps"] as? [[String: Any]])?.first?["device"] as? String == "mock-1")

        let samples = try await harness.samples()
        let mine = samples.filter { ($0["device"] as? [String: Any])?["identifier"] as? String == "mock-1" }
        let others = samples.filter { ($0["device"] as? [String: Any])?["identifier"] as? String == "mock-2" }
        #expect(!mine.isEmpty && !others.isEmpty)
        #expect(mine.allSatisfy { $0["person"] as? String == "ann" })
        #expect(others.allSatisfy { $0["person"] == nil })
        // ann's zones from her reserve over mock-1's samples only: as many seconds as mock-1 has
        // samples, give or take its last (a sample lasts until the next).
        let zones = try await run("stats", "--zones", "--person", "ann", "--output", "json")
        #expect(zones.exitCode == 0, "\(zones.stderr)")
        let rows = zones.stdout.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        #expect(rows.compactMap { $0["lower"] as? Double } == [0, 121, 135, 149, 162, 176])
        let seconds = rows.compactMap { $0["seconds"] as? Double }.reduce(0, +)
        #expect(abs(seconds - Double(mine.count) / 4) <= 1, "\(seconds) s for \(mine.count) samples at 4 Hz")
        #expect(try await run("stats", "--zones", "--person", "nobody").exitCode == 64)
        // --person: hers alone, and --limit counts hers.
        let hers = try await run("samples", "--person", "ann", "--output", "json")
        #expect(hers.stdout.split(separator: "\n").count == mine.count, "\(hers.stderr)")
        let two = try await run("samples", "--person", "ann", "--limit", "2", "--output", "json")
        #expect(two.stdout.split(separator: "\n").count == 2 && !two.stdout.contains("mock-2"))
        #expect(try await run("samples", "--person", "nobody").exitCode == 64)
        let csv = try await run("samples", "--output", "csv")
        #expect(!csv.stdout.contains("ann"))

        // Handed over before the samples: none is ann's any more.
        #expect(try await run("person", "add", "bob").exitCode == 0)
        #expect(try await run("person", "assign", "bob", "mock-1", "--from", "2h").exitCode == 0)
        #expect(try await harness.samples().allSatisfy { $0["person"] as? String != "ann" })
        #expect(try await run("person", "remove", "bob").exitCode == 0)
        #expect(try await run("person", "remove", "bob").exitCode == 64)
        #expect(try await harness.samples().allSatisfy { $0["person"] == nil })
    }

    @Test("stats --by and --hrv --person count each person's part of a strap handed over mid-recording, and nobody else's")
    func statisticsOfPeople() async throws {
        let harness = try Harness()
        let store = ["--store", harness.store]
        func run(_ arguments: String...) async throws -> CommandResult { try await harness.hrmctl(arguments + store) }
        func lines(_ result: CommandResult) -> [[String: Any]] {
            result.stdout.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        }
        func device(_ sample: [String: Any]) -> String? { (sample["device"] as? [String: Any])?["identifier"] as? String }
        _ = try await run("auth", "grant", "hrmd", "all")
        let recorded = try await ChildProcess.run(
            BuiltProducts.hrmd, store + ["--sensor", "mock:hz=4,contact-loss=0", "--sensor", "mock:hz=4,contact-loss=0", "--duration", "3"],
            environment: harness.environment, in: harness.directory)
        #expect(recorded.exitCode == 0, "\(recorded.stderr)")
        let strap = try await harness.samples().filter { device($0) == "mock-1" }
        try #require(strap.count >= 8, "\(strap.count) samples of mock-1")
        // ann wore mock-1 from an hour before; bob from its middle sample on.
        let handover = try #require(strap[strap.count / 2]["start"] as? String)
        for name in ["ann", "bob"] { #expect(try await run("person", "add", name).exitCode == 0) }
        #expect(try await run("person", "assign", "ann", "mock-1", "--from", "1h").exitCode == 0)
        let handed = try await run("person", "assign", "bob", "mock-1", "--from", handover)
        #expect(handed.exitCode == 0, "\(handed.stderr)")
        let people = lines(try await run("samples", "--output", "json"))
        for name in ["ann", "bob"] {
            let theirs = people.filter { $0["person"] as? String == name }.compactMap { $0["value"] as? Double }
            let stats = try await run("stats", "--by", "1h", "--person", name, "--output", "json")
            #expect(stats.exitCode == 0, "\(stats.stderr)")
            let buckets = lines(stats)
            #expect(buckets.compactMap { $0["count"] as? Double }.reduce(0, +) == Double(theirs.count), "\(name): \(stats.stdout)")
            #expect(buckets.compactMap { $0["min"] as? Double }.min() == theirs.min())
            #expect(buckets.compactMap { $0["max"] as? Double }.max() == theirs.max())
            #expect(!theirs.isEmpty)
        }
        // RR intervals: each person's beats are the strap's beats in their part.
        let beats = lines(try await run("samples", "--type", "rr-interval", "--output", "json"))
        let annBeats = beats.filter { $0["person"] as? String == "ann" }.count
        try #require(annBeats >= 2, "\(annBeats) beats of ann")
        let variability = try await run("stats", "--hrv", "--person", "ann", "--output", "json")
        #expect(variability.exitCode == 0, "\(variability.stderr)")
        #expect(lines(variability).first?["beats"] as? Double == Double(annBeats), "\(variability.stdout)")
        #expect(try await run("stats", "--by", "1h", "--person", "nobody").exitCode == 64)
        #expect(try await run("stats", "--hrv", "--person", "nobody").exitCode == 64)
        // The whole store's statistics are unchanged by people: both straps count.
        let everyone = lines(try await run("stats", "--by", "1h", "--output", "json"))
        #expect(everyone.compactMap { $0["count"] as? Double }.reduce(0, +) == Double(people.count))
    }
}
