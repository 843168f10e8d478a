import Foundation
import GRDB
import HealthUnits
import Testing
import TestSupport
import Timestamps

import HealthModel
@testable import HealthStore

/// What saves remember between flushes (`WriteCache`) never makes them lose, duplicate or
/// overwrite a sample: not when another store on the file writes between them, nor after a
/// deletion, a rolled-back save, a batch before the open chunk, a shape change or a full chunk.
@Suite("Write cache", .serialized)
struct WriteCacheTests {
    /// A sample as the checks compare it.
    private struct Expected: Hashable {
        var type: SampleType
        var device: String
        var start: Int64
        var value: Double
    }

    private static let straps = [HealthDevice(localIdentifier: "strap-a"), HealthDevice(localIdentifier: "strap-b")]

    private static func heartRate(_ bpm: Double, at micros: Int64, strap: Int = 0, location: HeartRateSensorLocation = .chest) throws
        -> QuantitySample
    {
        let time = Timestamp(microsecondsSinceEpoch: micros)
        return try QuantitySample(
            type: .heartRate, quantity: Quantity(unit: .countPerMinute, doubleValue: bpm), start: time, end: time,
            device: straps[strap], metadata: SampleMetadata(sensorLocation: location))
    }

    private static func beat(_ milliseconds: Double, at micros: Int64, strap: Int = 0) throws -> QuantitySample {
        try QuantitySample(
            type: .rrInterval, quantity: Quantity(unit: .millisecond, doubleValue: milliseconds),
            start: Timestamp(microsecondsSinceEpoch: micros),
            end: Timestamp(microsecondsSinceEpoch: micros + Int64((milliseconds * 1000).rounded())), device: straps[strap])
    }

    private static func expected(_ sample: QuantitySample) -> Expected {
        Expected(type: sample.type, device: sample.device?.localIdentifier ?? "", start: sample.start.microsecondsSinceEpoch, value: sample.canonicalValue)
    }

    /// Every sample of `type` the store lists, with its id; the ids are checked to be unique.
    private static func stored(_ store: HealthStore, _ type: SampleType = .heartRate) throws -> [Expected] {
        let samples = try store.samples(SampleQuery(type: type))
        #expect(Set(samples.map(\.id)).count == samples.count, "an id is listed twice")
        return samples.map { expected($0.sample) }
    }

    private static func openStore(_ path: String) throws -> HealthStore {
        let store = try HealthStore.open(path: path, mode: .createIfMissing)
        for type in SampleType.all { try store.setShareAuthorization(.sharingAuthorized, source: Fixture.hrmd.name, type: type) }
        return store
    }

    @Test("two stores on one file saving one strap's stream alternately lose and duplicate nothing")
    func twoWriters() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("shared.sqlite")
        let stores = [try Self.openStore(path), try Self.openStore(path)]
        var random = SplitMix64(seed: 21)
        var saved: Set<Expected> = []
        var time = Fixture.base.microsecondsSinceEpoch
        for flush in 0..<300 {
            var batch: [QuantitySample] = []
            for _ in 0..<(1 + Int(random.next() % 3)) {
                time += 250_000 + Int64(random.next() % 60_001) - 30_000
                batch.append(try Self.heartRate(Double(60 + random.next() % 100), at: time))
            }
            // Now and then a batch saved again, in part, by the other store.
            if flush % 7 == 3 { batch += batch.prefix(1) }
            let store = stores[Int(random.next() % 2)]
            let report = try store.save(batch, from: Fixture.hrmd)
            let new = Set(batch.map(Self.expected)).subtracting(saved)
            #expect(report.stored == new.count)
            saved.formUnion(new)
        }
        let sorted = saved.sorted { $0.start < $1.start }
        #expect(try Self.stored(stores[0]) == sorted)
        #expect(try Self.stored(stores[1]) == sorted)
        #expect(try stores[0].currentAnchor() == Int64(saved.count))
    }

    @Test("after a deletion through the same store, a save neither brings deleted samples back nor loses new ones")
    func deletionBetweenSaves() throws {
        let store = try Fixture.authorizedStore()
        let base = Fixture.base.microsecondsSinceEpoch
        var all: [QuantitySample] = []
        for flush in 0..<40 {
            let batch = try (0..<4).map { try Self.heartRate(Double(70 + $0), at: base + Int64(flush * 4 + $0) * 250_000) }
            all += batch
            _ = try store.save(batch, from: Fixture.hrmd)
            if flush == 20 {
                let deleted = try store.deleteSamples(
                    of: .heartRate, source: Fixture.hrmd.name, since: Timestamp(microsecondsSinceEpoch: base + 10 * 1_000_000))
                #expect(deleted == 4 * 21 - 40)
                all.removeAll { $0.start.microsecondsSinceEpoch >= base + 10 * 1_000_000 }
            }
        }
        #expect(try Self.stored(store) == all.map(Self.expected))
    }

    @Test("a save that rolls back leaves nothing remembered that its transaction wrote")
    func rolledBackSave() throws {
        let store = try Fixture.authorizedStore()
        let base = Fixture.base.microsecondsSinceEpoch
        var kept: [QuantitySample] = []
        for flush in 0..<10 {
            let batch = try (0..<2).map { try Self.heartRate(80, at: base + Int64(flush * 2 + $0) * 250_000) }
            kept += batch
            _ = try store.save(batch, from: Fixture.hrmd)
        }
        // A row that breaks a deferred foreign key, added when the save moves the anchor
        // sequence on: the save does all its work, then its commit fails and rolls it back.
        try store.writer.write { db in
            try db.execute(sql: """
                CREATE TABLE trap (source INTEGER REFERENCES source(id) DEFERRABLE INITIALLY DEFERRED);
                CREATE TRIGGER failing AFTER UPDATE ON anchorSequence BEGIN INSERT INTO trap VALUES (9999); END;
                """)
        }
        let lost = try (0..<3).map { try Self.heartRate(90, at: base + Int64(20 + $0) * 250_000) }
        #expect(throws: HealthStoreError.self) { try store.save(lost, from: Fixture.hrmd) }
        try store.writer.write { try $0.execute(sql: "DROP TRIGGER failing; DROP TABLE trap") }
        #expect(try Self.stored(store) == kept.map(Self.expected))
        let next = try (0..<2).map { try Self.heartRate(100, at: base + Int64(30 + $0) * 250_000) }
        #expect(try store.save(next, from: Fixture.hrmd).stored == 2)
        #expect(try Self.stored(store) == (kept + next).map(Self.expected))
        #expect(try store.save(lost, from: Fixture.hrmd).stored == 3)
        #expect(try Self.stored(store).count == kept.count + next.count + lost.count)
    }

    @Test("a stream of hours remembers one open chunk and one latest start per strap and type")
    func boundedMemory() throws {
        let store = try Fixture.authorizedStore()
        let base = Fixture.base.microsecondsSinceEpoch
        for flush in 0..<(12 * 36) {
            // Two straps' heart rates and one strap's beats, 100 s a flush: twelve hours.
            let time = base + Int64(flush) * 100_000_000
            let batch = try [Self.heartRate(70, at: time), Self.heartRate(71, at: time, strap: 1), Self.beat(800, at: time)]
            #expect(try store.save(batch, from: Fixture.hrmd).stored == 3)
            let remembered = store.writeCache.rememberedCounts
            #expect(remembered.openChunks <= 3 && remembered.latestStarts <= 3)
        }
        #expect(try Self.stored(store).count == 2 * 12 * 36)
    }

    @Test("a live stream with late, repeated and relocated samples, across chunks and hours, reads back as saved",
          arguments: [1, 2, 3] as [UInt64])
    func liveStream(seed: UInt64) throws {
        let store = try Fixture.authorizedStore()
        var random = SplitMix64(seed: seed)
        var saved: [SampleType: Set<Expected>] = [.heartRate: [], .rrInterval: []]
        var beats: [QuantitySample] = []
        // Half an hour before the end of an hour (base is 400 s into one) to past it.
        var time = Fixture.base.microsecondsSinceEpoch + 2_900 * 1_000_000
        var beatTime = time
        for flush in 0..<1_600 {
            var batch: [QuantitySample] = []
            for strap in 0..<2 {
                for _ in 0..<2 {
                    let jitter = Int64(random.next() % 60_001) - 30_000
                    let location: HeartRateSensorLocation = flush % 500 < 450 ? .chest : .wrist
                    batch.append(try Self.heartRate(Double(60 + random.next() % 90), at: time + jitter + Int64(strap), strap: strap, location: location))
                }
            }
            time += 500_000
            while beatTime < time {
                let interval = Double(700 + random.next() % 300) * 1000 / 1024
                if random.next() % 40 == 0 { beatTime += 900_000 }  // a missed beat
                batch.append(try Self.beat(interval, at: beatTime))
                beatTime += Int64((interval * 1000).rounded())
            }
            switch random.next() % 20 {
            case 0: batch += batch.prefix(2)  // repeated in the batch
            case 1: batch.append(try Self.heartRate(77, at: time - 40_000_000 - Int64(random.next() % 1000)))  // late
            case 2: if let old = beats.randomElement(using: &random) { batch.append(old) }  // saved again
            default: break
            }
            batch.shuffle(using: &random)
            let report = try store.save(batch, from: Fixture.hrmd)
            var new = 0
            for sample in batch where saved[sample.type]?.insert(Self.expected(sample)).inserted == true {
                new += 1
                if sample.type == .rrInterval { beats.append(sample) }
            }
            #expect(report.stored == new)
        }
        #expect(try Self.stored(store) == saved[.heartRate]?.sorted { ($0.start, $0.device) < ($1.start, $1.device) })
        #expect(try Self.stored(store, .rrInterval) == saved[.rrInterval]?.sorted { $0.start < $1.start })
        // The heartbeat series' gap flags are as one saving them all at once would set them.
        let fresh = try Fixture.authorizedStore()
        _ = try fresh.save(beats, from: Fixture.hrmd)
        #expect(try store.heartRateVariability(SampleQuery(type: .rrInterval)) == fresh.heartRateVariability(SampleQuery(type: .rrInterval)))
        let flags = { (store: HealthStore) in
            try store.read { db in
                try Row.fetchAll(db, sql: "SELECT \(SeriesRow.columns) FROM series WHERE typeId = 2 ORDER BY start").flatMap { row in
                    let points = try SeriesRow(row).points()
                    return zip(points.starts, points.precededByGap).map { "\($0)\($1)" }
                }
            }
        }
        #expect(try flags(store) == flags(fresh))
    }
}
