import Foundation
import GRDB
import Synchronization
import TestSupport
import Testing
import Timestamps

import HealthModel
@testable import HealthStore

@Suite("Waveforms: recordings saved in parts, chunked with their gaps, read a stretch at a time by the read rule")
struct WaveformStoreTests {
    private let hz = 130.0

    private func at(_ seconds: Double) -> Timestamp { Fixture.base.advanced(bySeconds: seconds) }

    /// `count` instants of a recognisable ECG-like ramp starting at instant `first`.
    private func values(_ first: Int, _ count: Int) -> [Int32] { (first..<(first + count)).map { Int32(($0 * 37) % 2001 - 1000) } }

    private func part(_ segments: [WaveformSegment], id: String = "w-1", source: String = "hrmd", open: Bool = true) -> WaveformPart {
        WaveformPart(
            recording: WaveformRecording(
                id: id, type: .electrocardiogram, source: source, device: "strap-1", frequency: hz, start: at(0), end: at(0),
                instantCount: 0, isOpen: open),
            segments: segments)
    }

    /// Instant `index` of a segment that starts at second `start`.
    private func segment(at start: Double, from first: Int, count: Int) -> WaveformSegment {
        WaveformSegment(start: at(start), values: values(first, count))
    }

    private func store(at path: String) throws -> HealthStore {
        let store = try HealthStore.open(path: path, mode: .createIfMissing)
        for type in SampleType.waveformTypes { try store.setShareAuthorization(.sharingAuthorized, source: "hrmd", type: type) }
        return store
    }

    private func read(_ store: HealthStore, _ id: String = "w-1", since: Timestamp? = nil, until: Timestamp? = nil, reader: String? = nil)
        throws -> [WaveformSegment]
    {
        var segments: [WaveformSegment] = []
        try store.readWaveform(id, since: since, until: until, reader: reader) { recording, piece in
            segments.append(joining: piece, frequency: recording.frequency, channels: recording.channels.count)
            return true
        }
        return segments
    }

    @Test("parts that follow each other make one recording whose samples read back exactly, across chunks")
    func partsJoin() throws {
        let directory = try TemporaryDirectory()
        let store = try store(at: directory.file("w.sqlite"))
        // 3000 instants in parts of 73 (a PMD frame's worth), each starting where the last ended.
        var first = 0
        while first < 3000 {
            let count = min(73, 3000 - first)
            let report = try store.saveWaveform(part([segment(at: Double(first) / hz, from: first, count: count)]))
            #expect(report.stored == count)
            first += count
        }
        let recording = try #require(try store.waveform("w-1"))
        #expect(recording.instantCount == 3000)
        #expect(recording.start == at(0))
        #expect(abs(recording.end.microsecondsSinceEpoch - at(3000 / hz).microsecondsSinceEpoch) <= 1)
        let segments = try read(store)
        #expect(segments.count == 1)
        #expect(segments.first?.values == values(0, 3000))
        // 1024 instants a chunk at most.
        let chunks = try store.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM waveformChunk") }
        #expect(chunks == 3)
    }

    @Test("a 30-second strip from inside a recording holds exactly the instants of its range")
    func stripInRange() throws {
        let directory = try TemporaryDirectory()
        let store = try store(at: directory.file("w.sqlite"))
        let count = Int(hz * 120)
        try store.saveWaveform(part([segment(at: 0, from: 0, count: count)]))
        let strip = try read(store, since: at(45), until: at(75))
        let firstIndex = Int((45 * hz).rounded(.up))
        let lastIndex = Int((75 * hz).rounded(.up))
        #expect(strip.count == 1)
        #expect(strip.first?.values == values(firstIndex, lastIndex - firstIndex))
        #expect(strip.first.map { abs($0.start.microsecondsSinceEpoch - at(Double(firstIndex) / hz).microsecondsSinceEpoch) <= 1 } == true)
    }

    @Test("a gap stays a gap: two segments, each with its own start")
    func gaps() throws {
        let directory = try TemporaryDirectory()
        let store = try store(at: directory.file("w.sqlite"))
        try store.saveWaveform(part([segment(at: 0, from: 0, count: 500)]))
        try store.saveWaveform(part([segment(at: 10, from: 1300, count: 200)]))
        let segments = try read(store)
        #expect(segments.map(\.start) == [at(0), at(10)])
        #expect(segments.map(\.values) == [values(0, 500), values(1300, 200)])
        #expect(try store.waveform("w-1")?.instantCount == 700)
    }

    @Test("saving a recording again stores nothing new and takes no anchor")
    func savedAgain() throws {
        let directory = try TemporaryDirectory()
        let store = try store(at: directory.file("w.sqlite"))
        let whole = part([segment(at: 0, from: 0, count: 1500)])
        #expect(try store.saveWaveform(whole).stored == 1500)
        let anchor = try store.currentAnchor()
        let again = try store.saveWaveform(whole)
        #expect(again.stored == 0)
        #expect(again.unchanged == 1500)
        #expect(try store.currentAnchor() == anchor)
        #expect(try read(store).first?.values == values(0, 1500))
    }

    @Test("a strap's clock a little fast: the next part starting within a period of the end is kept, not dropped")
    func driftKeepsSamples() throws {
        let directory = try TemporaryDirectory()
        let store = try store(at: directory.file("w.sqlite"))
        try store.saveWaveform(part([segment(at: 0, from: 0, count: 100)]))
        // Nominally at 100/hz; the strap's clock puts it 0.6 of a period earlier.
        try store.saveWaveform(part([segment(at: (100 - 0.6) / hz, from: 100, count: 100)]))
        #expect(try store.waveform("w-1")?.instantCount == 200)
        #expect(try read(store).flatMap(\.values) == values(0, 200))
    }

    @Test("no share authorization, nothing stored; the read rule hides other sources' recordings without a read grant")
    func authorization() throws {
        let directory = try TemporaryDirectory()
        let store = try store(at: directory.file("w.sqlite"))
        #expect(throws: HealthStoreError.shareNotAuthorized(source: "mary/app", types: ["electrocardiogram"])) {
            try store.saveWaveform(part([segment(at: 0, from: 0, count: 10)], id: "w-2", source: "mary/app"))
        }
        #expect(try store.waveforms(WaveformQuery()).isEmpty)
        try store.saveWaveform(part([segment(at: 0, from: 0, count: 10)]))
        try store.requestAuthorization(source: "mary/app", toShare: [], toRead: [.electrocardiogram])
        #expect(try store.waveforms(WaveformQuery(reader: "mary/app")).isEmpty)
        #expect(try read(store, reader: "mary/app").isEmpty)
        try store.setReadAuthorization(.sharingAuthorized, source: "mary/app", type: .electrocardiogram)
        #expect(try store.waveforms(WaveformQuery(reader: "mary/app")).map(\.id) == ["w-1"])
        #expect(try read(store, reader: "mary/app").first?.values == values(0, 10))
        #expect(try store.waveforms(WaveformQuery(types: [.acceleration], reader: "mary/app")).isEmpty)
    }

    @Test("malformed parts are refused: values not whole instants, a rate that is no rate, another type under the same id")
    func malformed() throws {
        let directory = try TemporaryDirectory()
        let store = try store(at: directory.file("w.sqlite"))
        var accel = part([WaveformSegment(start: at(0), values: [1, 2, 3, 4])])
        accel.recording.type = .acceleration
        #expect(throws: HealthStoreError.self) { try store.saveWaveform(accel) }
        var badRate = part([segment(at: 0, from: 0, count: 3)])
        badRate.recording.frequency = .nan
        #expect(throws: HealthStoreError.self) { try store.saveWaveform(badRate) }
        try store.saveWaveform(part([segment(at: 0, from: 0, count: 3)]))
        var other = part([WaveformSegment(start: at(1), values: [1, 2, 3])])
        other.recording.type = .acceleration
        #expect(throws: HealthStoreError.self) { try store.saveWaveform(other) }
        #expect(try store.waveform("w-1")?.instantCount == 3)
    }

    @Test("ending, announcing and deleting: an open recording is not deleted; a deleted one leaves a tombstone")
    func endAndDelete() throws {
        let directory = try TemporaryDirectory()
        let store = try store(at: directory.file("w.sqlite"))
        let announced = Mutex<[ChangeDetail]>([])
        let observation = store.observeChanges { change in announced.withLock { $0.append(change.detail ?? ChangeDetail()) } }
        try store.saveWaveform(part([segment(at: 0, from: 0, count: 50)]))
        #expect(throws: HealthStoreError.self) { try store.deleteWaveform("w-1") }
        try store.saveWaveform(part([], open: false))
        #expect(try store.waveform("w-1")?.isOpen == false)
        let deleted = try store.deleteWaveform("w-1")
        observation.cancel()
        #expect(deleted.instantCount == 50)
        #expect(try store.waveform("w-1") == nil)
        #expect(try store.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM waveformChunk") } == 0)
        let changes = try store.waveformChanges(since: 0, limit: 10)
        #expect(changes.deleted.map(\.id) == ["w-1"])
        let details = announced.withLock { $0 }
        #expect(details.count == 3)
        #expect(details.first?.waveforms.first?.segments.first?.values == values(0, 50))
        #expect(details.last?.deletedWaveforms.map(\.id) == ["w-1"])
    }
}
