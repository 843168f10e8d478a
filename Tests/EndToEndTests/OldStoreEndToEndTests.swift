import Foundation
import TestSupport
import Testing

@Suite("old store files end to end")
struct OldStoreEndToEndTests {
    static let stores = [
        OldStore(
            version: "v1", traces: ["v1/mock-session.trace.jsonl"],
            currentOutputs: [
                "auth-list.table": "a READ column since ad50262 (hrmctl auth --read); c53753a's table showed share only",
                "auth-list.csv": "a read column since ad50262, as in the table (the JSON already had read)",
                "auth-list.json": "each source says whether its application part is verified (a Flatpak, snap or unit label) since the hostile-clients work",
                "types.table": "the type workout (authorized like the others, kept as workouts) since the workouts work, and the event types since the events work",
                "types.json": "the type workout since the workouts work, and the event types since the events work",
                "types.csv": "the type workout since the workouts work, and the event types since the events work",
            ]),
        // traces/deleted.trace.jsonl is not replayed: part of it was deleted, and a deletion does not
        // keep the same samples from being saved again.
        OldStore(
            version: "v4", traces: ["traces/run1.trace.jsonl", "traces/run2.trace.jsonl", "v4/mock-session.trace.jsonl"],
            currentOutputs: [
                "devices.table": "since 0e22541 the table is followed by each current state's detail (\"mock-1: hrmd stopped\")",
                "auth-list.json": "each source says whether its application part is verified (a Flatpak, snap or unit label) since the hostile-clients work",
                "types.table": "the type workout (authorized like the others, kept as workouts) since the workouts work, and the event types since the events work",
                "types.json": "the type workout since the workouts work, and the event types since the events work",
                "types.csv": "the type workout since the workouts work, and the event types since the events work",
            ],
            seriesOutputs: Dictionary(uniqueKeysWithValues: ["stats-hrv.table", "stats-hrv.json", "stats-hrv-window.json"].map {
                ($0, "RMSSD now pairs each beat with the previous beat of its own heartbeat series (strap); two straps' beats interleave here, and the rows before paired only beats that happened to be neighbours in time")
            })),
    ]

    @Test("an old store upgrades in place: every output the old hrmctl recorded is the same, twice; replaying its recordings stores nothing new",
          arguments: stores)
    func upgradesInPlace(old: OldStore) async throws {
        let harness = try Harness()
        try FileManager.default.copyItem(atPath: old.storeFile, toPath: harness.store)
        let commands = try old.commands()
        #expect(commands.count >= 10)
        #expect(old.currentOutputFiles() == Set(old.currentOutputs.keys), "expected-current/ holds exactly the outputs whose reasons are given")
        #expect(old.seriesOutputFiles() == Set(old.seriesOutputs.keys), "expected-series/ holds exactly the outputs whose reasons are given")

        // The first command upgrades the file in place; the others read it a few at a time.
        var outputs = [commands[0].name: try await harness.run(commands[0])]
        outputs.merge(try await harness.runAll(Array(commands.dropFirst()))) { first, _ in first }
        for command in commands {
            let result = try #require(outputs[command.name])
            #expect(result.exitCode == 0, "\(old.version)/\(command.name): \(result.stderr)")
            let output = UnrepeatableOutput.masked(result.stdout), expected = UnrepeatableOutput.masked(try old.expectedOutput(of: command))
            let same = output == expected  // not in #expect, which would print both whole outputs
            #expect(same, "\(old.version)/\(command.name): \(firstDifference(output, expected))")
        }
        #expect(try StoreFile.integrityCheck(harness.store) == "ok")

        // c53753a made v2-sync-and-tombstones in its first form, without the anchorSequence table
        // that 8ce45fd added in place: the upgrade adds it, so the v1 file takes writes too.
        try await replay(old, harness)

        let again = try await harness.runAll(commands)
        for command in commands {
            let result = try #require(again[command.name]), first = try #require(outputs[command.name])
            #expect(result.exitCode == 0, "\(old.version)/\(command.name), again: \(result.stderr)")
            let output = UnrepeatableOutput.masked(result.stdout), before = UnrepeatableOutput.masked(first.stdout)
            let same = output == before
            #expect(same, "\(old.version)/\(command.name), again: \(firstDifference(output, before))")
        }
        #expect(try StoreFile.integrityCheck(harness.store) == "ok")
    }

    /// Replays the store's recordings; each must store `expectedStored` samples (nil: any number).
    func replay(_ old: OldStore, _ harness: Harness, expectedStored: Int? = 0) async throws {
        for trace in old.traces {
            let replay = try await harness.hrmctl(["replay", "--store", harness.store, "\(OldStore.root)/\(trace)"], withStore: false)
            #expect(replay.exitCode == 0, "\(trace): \(replay.stderr)")
            if let expectedStored {
                #expect(replay.stdout.contains("; \(expectedStored) samples stored;"), "\(trace): \(replay.stdout)")
            }
        }
    }

    /// The v1 store's recording is derived from its rows (c53753a could not record): it must give
    /// exactly the samples that c53753a's hrmctl listed, so that replaying it into the upgraded
    /// file shows whether the upgraded file keeps their identities.
    @Test("the v1 store's recording, derived from its rows, gives exactly its samples in a fresh store")
    func v1RecordingIsFaithful() async throws {
        let harness = try Harness()
        let old = Self.stores[0]
        _ = try await harness.hrmctl("auth", "grant", "hrmd", "heart-rate", "rr-interval", "active-energy-burned")
        try await replay(old, harness, expectedStored: nil)
        for type in ["heart-rate", "rr-interval", "active-energy-burned"] {
            let command = OldStore.Command(name: "samples-\(type).json", arguments: ["samples", "--store", "{store}", "--type", type, "--output", "json"])
            let output = try await harness.run(command).stdout, expected = try old.expectedOutput(of: command)
            #expect(!output.isEmpty)
            let same = output == expected
            #expect(same, "\(type): \(firstDifference(output, expected))")
        }
    }

    @Test("a store its reader may not write: a current one reads as its owner reads it, unchanged; an old one says it must be upgraded by someone who may")
    func readOnlyStores() async throws {
        let harness = try Harness()
        let shelf = harness.directory.file("shelf")
        try FileManager.default.createDirectory(atPath: shelf, withIntermediateDirectories: false)
        let current = shelf + "/current.sqlite", old = shelf + "/old.sqlite"
        try FileManager.default.copyItem(atPath: Self.stores[1].storeFile, toPath: current)
        try FileManager.default.copyItem(atPath: Self.stores[1].storeFile, toPath: old)
        let asOwner = try await harness.hrmctl(["samples", "--output", "json", "--store", current])
        #expect(asOwner.exitCode == 0)
        #expect(!FileManager.default.fileExists(atPath: current + "-wal"), "the upgrade's WAL is checkpointed and gone")
        for file in [current, old] { chmod(file, 0o444) }
        chmod(shelf, 0o555)
        chmod(harness.directory.path, 0o755)
        defer { chmod(shelf, 0o755) }
        let before = FileManager.default.contents(atPath: current)

        // As root, read as another user (setpriv), with a copy of hrmctl that user may run (the
        // build directory may be in root's home); otherwise the directory's mode keeps its owner out.
        let hrmctl = harness.directory.file("hrmctl")
        if geteuid() == 0 {
            // Written by cp, a process of its own: a child that another test forks meanwhile
            // inherits no descriptor open for writing on the copy, which would make running it
            // fail (ETXTBSY) until that child execs.
            let copy = try await ChildProcess.run("/bin/cp", [BuiltProducts.hrmctl, hrmctl], in: harness.directory)
            try #require(copy.exitCode == 0, "\(copy.stderr)")
            chmod(hrmctl, 0o755)
        }
        func asReader(_ arguments: [String]) async throws -> CommandResult {
            guard geteuid() == 0 else { return try await harness.hrmctl(arguments, withStore: false) }
            return try await ChildProcess.run(
                "/usr/bin/setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", hrmctl] + arguments,
                environment: harness.environment, in: harness.directory)
        }
        let read = try await asReader(["samples", "--output", "json", "--store", current])
        #expect(read.exitCode == 0, "\(read.stderr)")
        #expect(read.stdout == asOwner.stdout)
        #expect(FileManager.default.contents(atPath: current) == before)
        #expect(!FileManager.default.fileExists(atPath: current + "-wal"))

        let refused = try await asReader(["samples", "--store", old])
        #expect(refused.exitCode == 77)
        #expect(refused.stdout.isEmpty)
        #expect(refused.stderr.hasPrefix("hrmctl: permission denied for the store \(old): its schema is older than this hrmd's, and it must be upgraded once by someone who may write it"))
    }

    @Test("a store that lists a migration this version does not know is refused in one line and left as it was")
    func newerStoreRefused() async throws {
        let harness = try Harness()
        try FileManager.default.copyItem(atPath: Self.stores[1].storeFile, toPath: harness.store)
        #expect(try await harness.hrmctl("samples").exitCode == 0)
        try StoreFile.recordMigration("v99-from-the-future", in: harness.store)
        let before = try StoreFile.contents(harness.store)

        let samples = try await harness.hrmctl("samples", "--output", "json")
        #expect(samples.exitCode == 1)
        #expect(samples.stdout.isEmpty)
        #expect(samples.stderr == "hrmctl: the store \(harness.store) was written by a newer hrmd; upgrade hrmd to read it\n")
        let daemon = try await ChildProcess.run(
            BuiltProducts.hrmd, ["--store", harness.store, "--sensor", "mock", "--duration", "1"],
            environment: harness.environment, in: harness.directory)
        #expect(daemon.exitCode == 1)
        #expect(daemon.stderr == "hrmd: the store \(harness.store) was written by a newer hrmd; upgrade hrmd to read it\n")
        #expect(try StoreFile.contents(harness.store) == before)
    }
}
