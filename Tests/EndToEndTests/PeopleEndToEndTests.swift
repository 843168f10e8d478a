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
}
