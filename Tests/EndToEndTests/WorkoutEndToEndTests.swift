import Foundation
import TestSupport
import Testing

@Suite("hrmctl workout end to end, on a store file")
struct WorkoutEndToEndTests {
    private func object(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], "not one JSON object: \(text)")
    }

    @Test("a workout is started, lapped, ended by separate processes and shows the figures of its person's samples")
    func lifecycle() async throws {
        let harness = try Harness()
        let store = ["--store", harness.store]
        func run(_ arguments: String...) async throws -> CommandResult { try await harness.hrmctl(arguments + store) }
        _ = try await run("auth", "grant", "hrmd", "heart-rate")
        #expect(try await run("person", "add", "ann", "--max-hr", "200").exitCode == 0)
        #expect(try await run("person", "assign", "ann", "mock-1", "--from", "1h").exitCode == 0)

        let started = try await run("workout", "start", "--person", "ann", "--activity", "rowing", "--at", "1m")
        #expect(started.exitCode == 0, "\(started.stderr)")
        let id = try #require(started.stdout.split(separator: "\n").last.map(String.init))
        #expect(UUID(uuidString: id) != nil, "the last line is the id: \(started.stdout)")
        // One open workout per person; the rules of events; bad arguments.
        #expect(try await run("workout", "start", "--person", "ann").exitCode == 64)
        #expect(try await run("workout", "resume", "--person", "ann").exitCode == 64)
        #expect(try await run("workout", "start", "--person", "ann", "--activity", "flying").exitCode == 64)
        #expect(try await run("workout", "start").exitCode == 64)
        #expect(try await run("workout", "lap").exitCode == 64)
        #expect(try await run("workout", "start", "--person", "nobody").exitCode == 64)

        let recorded = try await ChildProcess.run(
            BuiltProducts.hrmd, store + ["--sensor", "mock:hz=4,contact-loss=0", "--sensor", "mock:hz=4,contact-loss=0", "--duration", "2"],
            environment: harness.environment, in: harness.directory)
        #expect(recorded.exitCode == 0, "\(recorded.stderr)")
        let lap = try await run("workout", "lap", "--person", "ann", "--at", "30s")
        #expect(lap.exitCode == 0, "\(lap.stderr)")
        let ended = try await run("workout", "end", id)
        #expect(ended.exitCode == 0, "\(ended.stderr)")
        #expect(try await run("workout", "end", id).exitCode == 64, "ended already")

        let hers = try await run("samples", "--person", "ann", "--output", "csv")
        let sampleCount = hers.stdout.split(separator: "\n").count - 1
        #expect(sampleCount > 0)
        let shown = try await run("workout", "show", id, "--output", "json")
        #expect(shown.exitCode == 0, "\(shown.stderr)")
        let workout = try object(shown.stdout)
        #expect(workout["id"] as? String == id)
        #expect(workout["person"] as? String == "ann")
        #expect(workout["activity"] as? String == "rowing")
        #expect(workout["end"] is String)
        #expect((workout["events"] as? [[String: Any]])?.map { $0["type"] as? String } == ["lap"])
        let laps = try #require(workout["laps"] as? [[String: Any]])
        #expect(laps.count == 2)
        #expect((laps[0]["heartRate"] as? [String: Any]) == nil, "the first lap ended before the samples")
        let heartRate = try #require(workout["heartRate"] as? [String: Any])
        #expect((heartRate["average"] as? Double ?? 0) > 30)
        let zones = try #require(workout["zones"] as? [[String: Any]])
        #expect(zones.compactMap { $0["lower"] as? Double } == [0, 100, 120, 140, 160, 180])
        let zoneSeconds = zones.compactMap { $0["seconds"] as? Double }.reduce(0, +)
        #expect(abs(zoneSeconds - Double(sampleCount) / 4) <= 1, "\(zoneSeconds) s in zones for \(sampleCount) samples at 4 Hz")
        #expect((workout["elapsedSeconds"] as? Double ?? 0) >= 60)
        #expect(workout["trimp"] is Double)
        #expect(workout["energyKilocalories"] == nil, "ann's sex, weight and birth year are not known")

        let listed = try await run("workout", "list", "--output", "json")
        #expect(listed.stdout.split(separator: "\n").count == 1)
        #expect(try object(listed.stdout)["id"] as? String == id)
        let table = try await run("workout", "show", id)
        #expect(table.stdout.contains("rowing of ann"), "\(table.stdout)")

        #expect(try await run("workout", "delete", id).exitCode == 0)
        #expect(try await run("workout", "show", id).exitCode == 64)
        #expect(try await run("workout", "list").stdout.contains("no workouts"))
        // Samples are not workouts: the type workout is authorized, never queried as samples.
        #expect(try await run("samples", "--type", "workout").exitCode == 64)
        let types = try await harness.hrmctl(["types", "--workouts"])
        #expect(types.stdout.contains("strength-training") && types.stdout.contains("traditionalStrengthTraining"))
    }

    @Test("a strap's workout is its wearer's when the strap is assigned, and the device's when nobody wears it")
    func strapWorkouts() async throws {
        let harness = try Harness()
        let store = ["--store", harness.store]
        func run(_ arguments: String...) async throws -> CommandResult { try await harness.hrmctl(arguments + store) }
        #expect(try await run("person", "add", "bo").exitCode == 0)
        #expect(try await run("person", "assign", "bo", "strap-1", "--from", "1h").exitCode == 0)
        let worn = try await run("workout", "start", "--device", "strap-1")
        #expect(worn.exitCode == 0, "\(worn.stderr)")
        #expect(worn.stdout.contains("of bo"), "\(worn.stdout)")
        #expect(try await run("workout", "pause", "--person", "bo").exitCode == 0)
        let free = try await run("workout", "start", "--device", "strap-2", "--activity", "cycling")
        #expect(free.exitCode == 0, "\(free.stderr)")
        #expect(try await run("workout", "start", "--device", "strap-2").exitCode == 64, "the strap's workout is open")
        #expect(try await run("workout", "end", "--device", "strap-2").exitCode == 0)
        let listed = try await run("workout", "list", "--output", "csv")
        #expect(listed.stdout.split(separator: "\n").count == 3, "\(listed.stdout)")
    }
}
