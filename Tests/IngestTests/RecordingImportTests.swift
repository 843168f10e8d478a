import Foundation
import GRDB
import HealthModel
import HealthStore
import Logging
import Recordings
import TestSupport
import Testing

@testable import Ingest

@Suite("Importing recordings from paths and descriptors")
struct RecordingImportTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("FITDecodingTests/Fixtures").path

    static let header = #"{"format":"hrmd-trace","version":1}"#
    static func notify(_ second: Int, _ value: String) -> String {
        #"{"t":"2026-11-20T10:00:0\#(second).000Z","transport":"ble","device":"AA:BB:CC:DD:EE:FF","kind":"notify","characteristic":"2a37","value":"\#(value)"}"#
    }

    /// The damaged trace of the replay end-to-end test: lines 4, 5 and 6 are bad.
    static let damagedTrace = [
        header,
        #"{"t":"2026-11-20T10:00:00.000Z","transport":"ble","device":"AA:BB:CC:DD:EE:FF","kind":"read","characteristic":"2a38","value":"01"}"#,
        notify(1, "0648"),
        String(notify(2, "06").dropLast(2)),
        "garbage",
        notify(3, "zz"),
        notify(4, "064a"),
        #"{"t":"2026-11-20T10:00:05.000Z","transport":"ble","device":"AA:BB:CC:DD:EE:FF","kind":"battery-low","extra":true}"#,
    ].joined(separator: "\n")

    let directory: TemporaryDirectory
    let store: HealthStore

    init() throws {
        directory = try TemporaryDirectory()
        store = try HealthStore(writer: DatabaseQueue())
    }

    func importer(options: RecordingImport.Options = .init(), messages: @escaping (String) -> Void = { _ in }) -> RecordingImport {
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        return RecordingImport(
            store: store, settings: IngestSettings(source: HealthSource(name: "hrmd"), maxBatch: 100), options: options,
            logger: logger, messages: messages)
    }

    func file(_ name: String, _ text: String) throws -> String {
        let path = directory.file(name)
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// Runs `body` with `path` open read-only; checks the descriptor is still open after it.
    func withDescriptor<T>(_ path: String, _ body: (Int32) throws -> T) throws -> T {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        try #require(fd >= 0)
        defer { close(fd) }
        let result = try body(fd)
        #expect(fcntl(fd, F_GETFD) != -1, "the caller's descriptor stays open")
        return result
    }

    func grant() throws {
        try store.setShareAuthorization(.sharingAuthorized, source: "hrmd", type: .heartRate)
    }

    @Test("a damaged trace from a descriptor: bad lines by number under its name, the good ones stored")
    func damagedTraceFromDescriptor() throws {
        try grant()
        let path = try file("on-disk-name.jsonl", Self.damagedTrace)
        var messages: [String] = []
        var recordings = importer { messages.append($0) }
        try withDescriptor(path) { fd in try recordings.replay(descriptor: fd, name: "damaged.trace.jsonl") }
        let summary = recordings.finish()
        #expect(messages.count == 3)
        for (message, line) in zip(messages, [4, 5, 6]) { #expect(message.hasPrefix("damaged.trace.jsonl:\(line): "), "\(message)") }
        #expect(summary.badLines == 3)
        // Frames: the location read, two notifications, and the kind this version ignores.
        #expect(summary.frames == 4 && summary.stored == 2 && summary.unchanged == 0 && summary.denied == 0)
        #expect(summary.mayShareHeartRate && !summary.storedNothingForLackOfAuthorization)
        #expect(summary.description == "4 frames; 2 samples stored; 0 already stored; 3 bad lines")
        #expect(try store.sampleCount(of: .heartRate) == 2)
    }

    @Test("a well-formed line whose frame does not decode is a bad line with its number: counted, told, the rest stored")
    func undecodableFrameByLine() throws {
        try grant()
        // Line 3: a 0x2A37 value cut short (flags say a 16-bit heart rate, one byte follows);
        // line 4: a location beyond the defined ones.
        let trace = [
            Self.header, Self.notify(1, "0648"), Self.notify(2, "0748"),
            #"{"t":"2026-11-20T10:00:03.000Z","transport":"ble","device":"AA:BB:CC:DD:EE:FF","kind":"read","characteristic":"2a38","value":"16"}"#,
            Self.notify(4, "064a"),
        ].joined(separator: "\n")
        var messages: [String] = []
        var recordings = importer { messages.append($0) }
        try recordings.replay(path: try file("cut.jsonl", trace), name: "cut.trace.jsonl")
        let summary = recordings.finish()
        #expect(messages.count == 2)
        #expect(messages.first?.hasPrefix("cut.trace.jsonl:3: notify 2a37 does not decode: ") == true, "\(messages)")
        #expect(messages.last?.hasPrefix("cut.trace.jsonl:4: read 2a38 does not decode: ") == true, "\(messages)")
        #expect(summary.badLines == 2 && summary.stored == 2)
        #expect(summary.skipped["malformed frame"] == 2)
    }

    @Test("a path and a descriptor of the same trace give the same samples; the second stores nothing new")
    func pathAndDescriptorAgree() throws {
        try grant()
        let path = try file("good.jsonl", [Self.header, Self.notify(1, "0648"), Self.notify(2, "0649")].joined(separator: "\n"))
        var first = importer()
        try first.replay(path: path)
        #expect(first.finish().stored == 2)
        var second = importer()
        try withDescriptor(path) { fd in try second.replay(descriptor: fd, name: "good") }
        let summary = second.finish()
        #expect(summary.stored == 0 && summary.unchanged == 2)
    }

    @Test("a FIT file from a descriptor: every record's heart rate, as the path gives")
    func fitFromDescriptor() throws {
        try grant()
        let path = "\(Self.fixtures)/garmin-edge-820-bike.fit"
        let csv = try String(contentsOfFile: "\(Self.fixtures)/garmin-edge-820-bike-records.csv", encoding: .utf8)
        let expected = csv.split(whereSeparator: \.isNewline).dropFirst().compactMap { line -> Double? in
            let columns = line.split(separator: ",", omittingEmptySubsequences: false)
            return columns.count > 1 ? Double(columns[1]) : nil
        }
        var messages: [String] = []
        var recordings = importer { messages.append($0) }
        try withDescriptor(path) { fd in
            _ = lseek(fd, 1000, SEEK_SET)  // wherever the caller left it, the file is read from its start
            try recordings.replay(descriptor: fd, name: "ride.fit")
        }
        let summary = recordings.finish()
        #expect(messages == ["ride.fit: 1 workout is not stored: hrmd may not share workout (grant it with: hrmctl auth grant hrmd workout)"])
        #expect(summary.stored == expected.count && summary.badLines == 0)
        #expect(summary.workoutsDenied == 1 && summary.workoutsStored == 0)
        let values = try store.samples(SampleQuery(type: .heartRate)).map { $0.sample.canonicalValue }
        #expect(values == expected)
    }

    @Test("a Garmin Edge's ride becomes its cycling workout, its laps and pauses as the file says, once")
    func workoutOfARide() throws {
        try grant()
        try store.setShareAuthorization(.sharingAuthorized, source: "hrmd", type: .workout)
        let path = "\(Self.fixtures)/garmin-edge-820-bike.fit"
        var messages: [String] = []
        var recordings = importer { messages.append($0) }
        try recordings.replay(path: path)
        #expect(messages.isEmpty)
        #expect(recordings.finish().workoutsStored == 1)
        let workout = try #require(try store.workouts(WorkoutQuery()).first)
        #expect(workout.activity == .cycling && workout.source == "hrmd" && workout.person == nil)
        #expect(workout.device?.hasPrefix("fit") == true)
        #expect(workout.problem == nil && !workout.isOpen)
        let samples = try store.samples(SampleQuery(type: .heartRate))
        let first = try #require(samples.first).sample.start, last = try #require(samples.last).sample.start
        let end = try #require(workout.end)
        #expect(workout.start <= first && last <= end, "the session holds its records")
        var again = importer()
        try again.replay(path: path)
        let second = again.finish()
        #expect(second.workoutsUnchanged == 1 && second.workoutsStored == 0 && second.stored == 0)
    }

    @Test("a damaged FIT file from a descriptor is refused, or stored up to the damage when accepted")
    func damagedFIT() throws {
        try grant()
        // A watch's file cut in half.
        let whole = try Data(contentsOf: URL(fileURLWithPath: "\(Self.fixtures)/garmin-fenix-5-bike.fit"))
        let path = directory.file("cut.fit")
        try whole.prefix(whole.count / 2).write(to: URL(fileURLWithPath: path))
        var strict = importer()
        #expect {
            try withDescriptor(path) { fd in try strict.replay(descriptor: fd, name: "cut.fit") }
        } throws: { error in
            guard case .damaged(let name, let reason) = error as? RecordingError else { return false }
            return name == "cut.fit" && reason.contains("--accept-damaged")
        }
        var messages: [String] = []
        var lenient = importer(options: .init(acceptDamaged: true)) { messages.append($0) }
        try withDescriptor(path) { fd in try lenient.replay(descriptor: fd, name: "cut.fit") }
        let summary = lenient.finish()
        #expect(messages.count == 1 && messages.first?.hasPrefix("cut.fit: ") == true)
        #expect(messages.first?.hasSuffix("; storing what was read before it") == true)
        #expect(summary.stored > 0)
    }

    @Test("more than 50 bad lines: 50 told one by one, then how many more")
    func manyBadLines() throws {
        try grant()
        let path = try file("bad.jsonl", ([Self.header] + Array(repeating: "garbage", count: 60)).joined(separator: "\n"))
        var messages: [String] = []
        var recordings = importer { messages.append($0) }
        try recordings.replay(path: path, name: "bad")
        #expect(messages.count == 51)
        #expect(messages[49].hasPrefix("bad:51: "))
        #expect(messages.last == "bad: 10 more bad lines")
        #expect(recordings.finish().badLines == 60)
    }

    @Test("not a recording, an empty file and a pipe are errors naming the file, not hangs")
    func unreadable() throws {
        let text = try file("notes.txt", "hello\n")
        var recordings = importer()
        #expect(throws: RecordingError.self) { try withDescriptor(text) { fd in try recordings.replay(descriptor: fd, name: "notes") } }
        let empty = try file("empty", "")
        #expect {
            try withDescriptor(empty) { fd in try recordings.replay(descriptor: fd, name: "empty") }
        } throws: { error in
            guard case .unknownFormat(let name) = error as? RecordingError else { return false }
            return name == "empty"
        }
        var ends: [Int32] = [0, 0]
        try #require(pipe(&ends) == 0)
        defer { close(ends[0]) }
        _ = Self.header.withCString { write(ends[1], $0, strlen($0)) }
        close(ends[1])
        #expect {
            try recordings.replay(descriptor: ends[0], name: "pipe")
        } throws: { error in
            guard case .unreadable(let name, _, false) = error as? RecordingError else { return false }
            return name == "pipe"
        }
    }

    @Test("without share authorization nothing is stored and the summary says why")
    func notAuthorized() throws {
        let path = try file("one.jsonl", [Self.header, Self.notify(1, "0648")].joined(separator: "\n"))
        var recordings = importer()
        try recordings.replay(path: path)
        let summary = recordings.finish()
        #expect(summary.denied == 1 && summary.stored == 0)
        #expect(summary.storedNothingForLackOfAuthorization && !summary.mayShareHeartRate)
        #expect(summary.heartRateShareStatus == .notDetermined)
        #expect(summary.description == "1 frames; 0 samples stored; 0 already stored; 1 not authorized")
    }

    @Test("skips are counted by reason; a speed paces the frames")
    func skipsAndSpeed() throws {
        try grant()
        // In contact, heart rate 0: out of range, skipped.
        let path = try file("skips.jsonl", [Self.header, Self.notify(0, "0648"), Self.notify(1, "0600"), Self.notify(2, "0649")].joined(separator: "\n"))
        var recordings = importer(options: .init(speed: 8))
        let started = ContinuousClock.now
        try recordings.replay(path: path)
        #expect(ContinuousClock.now - started >= .milliseconds(240))  // 2 recorded seconds at 8×
        let summary = recordings.finish()
        #expect(summary.skipped == ["heart rate out of range": 1])
        #expect(summary.description.hasSuffix("; skipped 1 (heart rate out of range)"))
    }
}
