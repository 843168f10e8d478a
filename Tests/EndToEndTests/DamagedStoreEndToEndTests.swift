import Foundation
import GRDB
import TestSupport
import Testing

/// The built programs against a damaged store: one line naming the file and the way out,
/// exit 65, and not a byte written to the store or its write-ahead log.
@Suite("damaged stores, end to end")
struct DamagedStoreEndToEndTests {
    enum Damage: String, CaseIterable, CustomTestStringConvertible {
        case garbagePage = "a page of garbage"
        case truncated = "a truncated file"
        case foreignLog = "a write-ahead log of another database"

        var testDescription: String { rawValue }
    }

    /// A store with a few seconds of two mock straps, closed.
    func storeWithSamples(_ harness: Harness) async throws {
        #expect(try await harness.hrmctl("auth", "grant", "hrmd", "all").exitCode == 0)
        let daemon = try harness.startDaemon(["--sensor", "mock:hz=50", "--sensor", "mock:hz=50,seed=2", "--duration", "3"])
        #expect(try await daemon.wait() == .exited(0))
        #expect(try StoreFile.heartRateCount(harness.store) > 100)
    }

    /// What makes the store at `path` damaged.
    func damage(_ path: String, _ damage: Damage, in directory: TemporaryDirectory) throws {
        switch damage {
        case .garbagePage: try StoreDamage.garbagePage(in: path)
        case .truncated: try StoreDamage.truncate(path, keepingPages: 3)
        case .foreignLog: try StoreDamage.foreignLog(beside: path, in: directory.path)
        }
    }

    @Test("hrmctl samples and hrmd: one line naming the file and the way out, exit 65, nothing written", arguments: Damage.allCases)
    func refused(_ kind: Damage) async throws {
        let harness = try Harness()
        try await storeWithSamples(harness)
        try damage(harness.store, kind, in: harness.directory)
        // A reader may leave an empty -wal file behind, as SQLite does: no byte of the store's.
        let files = [harness.store, harness.store + "-wal"]
        let before = files.map { FileManager.default.contents(atPath: $0) ?? Data() }

        let read = try await harness.hrmctl(["samples"])
        let daemon = try harness.startDaemon(["--sensor", "mock", "--duration", "1"])
        let daemonEnd = try await daemon.wait()
        for (program, status, stderr) in [("hrmctl", read.exitCode, read.stderr), ("hrmd", daemonEnd == .exited(65) ? 65 : -1, daemon.standardError)] {
            #expect(status == 65, "\(program): \(stderr)")
            let lines = stderr.split(separator: "\n").filter { $0.contains(harness.store) }
            #expect(lines.count == 1, "\(program): \(stderr)")
            let way = kind == .foreignLog ? "mv \(harness.store)-wal" : "sqlite3 \(harness.store) .recover"
            #expect(lines.first?.contains(way) == true, "\(program): \(stderr)")
        }
        #expect(files.map { FileManager.default.contents(atPath: $0) ?? Data() } == before, "the store or its log was written")
    }

    @Test("once the foreign log is moved away, the store reads as last checkpointed")
    func foreignLogMovedAway() async throws {
        let harness = try Harness()
        try await storeWithSamples(harness)
        let stored = try StoreFile.heartRateCount(harness.store)
        try StoreDamage.foreignLog(beside: harness.store, in: harness.directory.path)
        #expect(try await harness.hrmctl(["samples"]).exitCode == 65)
        try FileManager.default.moveItem(atPath: harness.store + "-wal", toPath: harness.store + "-wal.foreign")
        let read = try await harness.hrmctl(["samples", "--output", "json"])
        #expect(read.exitCode == 0, "\(read.stderr)")
        #expect(read.stdout.split(separator: "\n").count == stored, "\(read.stdout.prefix(500)) \(read.stderr)")
    }

    @Test("another program's database given as the store is refused and left alone")
    func otherDatabase() async throws {
        let harness = try Harness()
        try await DatabaseQueue(path: harness.store).write { db in
            try db.execute(sql: "CREATE TABLE notes (text TEXT); INSERT INTO notes VALUES ('mine')")
        }
        let before = FileManager.default.contents(atPath: harness.store)
        let read = try await harness.hrmctl(["samples"])
        #expect(read.exitCode == 1)
        #expect(read.stderr.contains("not an hrmd store") && read.stderr.contains("notes"), "\(read.stderr)")
        let daemon = try harness.startDaemon(["--sensor", "mock", "--duration", "1"])
        #expect(try await daemon.wait() != .exited(0))
        #expect(daemon.standardError.contains("not an hrmd store"), "\(daemon.standardError)")
        #expect(FileManager.default.contents(atPath: harness.store) == before)
    }
}
