import Foundation
import GRDB
import Synchronization
import HealthUnits
import Testing
import TestSupport
import Timestamps

import HealthModel
@testable import HealthStore

/// The store as series chunks, checked against a model that keeps one entry per sample: what
/// a table of rows would hold.
@Suite("Series storage", .serialized)
struct SeriesStorageTests {
    /// One sample as the model keeps it.
    private struct Expected: Hashable {
        var id: Int64
        var type: SampleType
        var device: String?
        var start: Int64
        var end: Int64
        var value: Double
        var location: HeartRateSensorLocation?
    }

    private struct Identity: Hashable {
        var type: SampleType
        var device: String?
        var start: Int64
    }

    /// The store's behaviour when every sample is a row: identity (type, device, start), ids
    /// from one anchor sequence in the order of the batch, deletions as tombstones.
    private struct Model {
        var samples: [Identity: Expected] = [:]
        var anchor: Int64 = 0
        var tombstones: [Int64] = []

        mutating func save(_ batch: [QuantitySample]) -> Int {
            var stored = 0
            for sample in batch {
                let identity = Identity(type: sample.type, device: sample.device?.localIdentifier, start: sample.start.microsecondsSinceEpoch)
                guard samples[identity] == nil else { continue }
                anchor += 1
                stored += 1
                samples[identity] = Expected(
                    id: anchor, type: sample.type, device: identity.device, start: identity.start,
                    end: sample.end.microsecondsSinceEpoch, value: sample.canonicalValue, location: sample.metadata.sensorLocation)
            }
            return stored
        }

        mutating func delete(type: SampleType, device: String?, from: Int64, to: Int64) -> Int {
            let doomed = samples.filter { identity, _ in
                identity.type == type && (device == nil || identity.device == device) && identity.start >= from && identity.start < to
            }
            for (identity, expected) in doomed.sorted(by: { $0.value.id < $1.value.id }) {
                samples[identity] = nil
                anchor += 1
                tombstones.append(expected.id)
            }
            return doomed.count
        }

        func listed(_ type: SampleType, from: Int64 = .min, to: Int64 = .max) -> [Expected] {
            samples.values.filter { $0.type == type && $0.start >= from && $0.start < to }
                .sorted { ($0.start, $0.id) < ($1.start, $1.id) }
        }
    }

    private static func expected(_ stored: StoredSample) -> Expected {
        Expected(
            id: stored.id, type: stored.sample.type, device: stored.sample.device?.localIdentifier,
            start: stored.sample.start.microsecondsSinceEpoch, end: stored.sample.end.microsecondsSinceEpoch,
            value: stored.sample.canonicalValue, location: stored.sample.metadata.sensorLocation)
    }

    private static let devices: [HealthDevice?] = [
        HealthDevice(localIdentifier: "AA:BB:CC:DD:EE:01"), HealthDevice(localIdentifier: "AA:BB:CC:DD:EE:02"), nil,
    ]

    /// A random sample around three hours from `Fixture.base`: whole seconds, milliseconds or
    /// microseconds; heart rates and RR intervals (mostly as beats end to end, sometimes not);
    /// a location that changes now and then; often a start that is stored already.
    private static func randomSample(_ random: inout SplitMix64, reusing model: Model) throws -> QuantitySample {
        if !model.samples.isEmpty, random.next() % 4 == 0, let old = model.samples.values.randomElement(using: &random) {
            let device = devices.first { $0?.localIdentifier == old.device } ?? nil
            return try sample(type: old.type, start: old.start, value: old.value + 1, device: device, random: &random)
        }
        let type: SampleType = random.next() % 3 == 0 ? .rrInterval : .heartRate
        let resolution: Int64 = [1_000_000, 1000, 1][Int(random.next() % 3)]
        let offset = Int64(random.next() % (3 * 3_600_000_000)) / resolution * resolution
        let device = devices[Int(random.next() % UInt64(devices.count))]
        let value = type == .heartRate ? Double(40 + random.next() % 150) : Double(600 + random.next() % 600) * 1000 / 1024
        return try sample(type: type, start: Fixture.base.microsecondsSinceEpoch + offset, value: value, device: device, random: &random)
    }

    private static func sample(type: SampleType, start: Int64, value: Double, device: HealthDevice?, random: inout SplitMix64) throws
        -> QuantitySample
    {
        var end = start
        if type == .rrInterval {
            end = random.next() % 5 == 0 ? start + 1234 : start + Int64((value * 1000).rounded())
        }
        let location: HeartRateSensorLocation? = random.next() % 10 == 0 ? .wrist : .chest
        return try QuantitySample(
            type: type, quantity: Quantity(unit: type.canonicalUnit, doubleValue: value),
            start: Timestamp(microsecondsSinceEpoch: start), end: Timestamp(microsecondsSinceEpoch: end), device: device,
            metadata: SampleMetadata(sensorLocation: location))
    }

    private func check(_ store: HealthStore, _ model: Model, _ random: inout SplitMix64) throws {
        for type in [SampleType.heartRate, .rrInterval] {
            #expect(try store.samples(SampleQuery(type: type)).map(Self.expected) == model.listed(type))
            #expect(try store.sampleCount(of: type) == model.listed(type).count)
            let from = Fixture.base.microsecondsSinceEpoch + Int64(random.next() % (3 * 3_600_000_000))
            let to = from + Int64(random.next() % 3_600_000_000)
            let range = model.listed(type, from: from, to: to)
            let query = SampleQuery(type: type, since: Timestamp(microsecondsSinceEpoch: from), until: Timestamp(microsecondsSinceEpoch: to))
            #expect(try store.samples(query).map(Self.expected) == range)
            var newest = query
            newest.newestFirst = true
            newest.limit = 50
            #expect(try store.samples(newest).map(Self.expected) == Array(range.reversed().prefix(50)))
            let minutes = try store.statistics(of: type, by: .seconds(60), since: query.since, until: query.until)
            #expect(minutes.map(\.count).reduce(0, +) == range.count)
            #expect(minutes.map(\.sum).reduce(0, +) == range.map(\.value).reduce(0, +))
            // Whole hours come from the hour summaries, kept through saves, replacements and deletions.
            let hours = try store.statistics(of: type, by: .seconds(3600), since: query.since, until: query.until)
            #expect(hours.map(\.count).reduce(0, +) == range.count)
            #expect(hours.map(\.maximum).max() == range.map(\.value).max())
            let all = try store.statistics(of: type, by: .days(try #require(TimeZone(identifier: "UTC"))))
            #expect(all.map(\.count).reduce(0, +) == model.listed(type).count)
            #expect(all.map(\.sum).reduce(0, +) == model.listed(type).map(\.value).reduce(0, +))
        }
    }

    @Test("random saves and deletions read back as one row per sample would", arguments: [1, 2, 3] as [UInt64])
    func modelCheck(seed: UInt64) throws {
        var random = SplitMix64(seed: seed)
        let store = try Fixture.authorizedStore()
        var model = Model()
        for round in 0..<24 {
            if round % 7 == 6 {
                let type: SampleType = random.next() % 2 == 0 ? .heartRate : .rrInterval
                let device = Self.devices[Int(random.next() % 2)]?.localIdentifier
                let from = Fixture.base.microsecondsSinceEpoch + Int64(random.next() % (3 * 3_600_000_000))
                let to = from + Int64(random.next() % 1_800_000_000)
                let deleted = try store.deleteSamples(
                    of: type, source: Fixture.hrmd.name, device: device,
                    since: Timestamp(microsecondsSinceEpoch: from), until: Timestamp(microsecondsSinceEpoch: to))
                #expect(deleted == model.delete(type: type, device: device, from: from, to: to))
            } else {
                let count = 1 + Int(random.next() % 400)
                var batch: [QuantitySample] = []
                for _ in 0..<count { batch.append(try Self.randomSample(&random, reusing: model)) }
                let report = try store.save(batch, from: Fixture.hrmd)
                let stored = model.save(batch)
                #expect(report.stored == stored)
                #expect(report.unchanged == count - stored)
            }
            #expect(try store.currentAnchor() == model.anchor)
            try check(store, model, &random)
        }
        let changes = try store.changes(of: .heartRate, since: 0, limit: 1_000_000)
        #expect(changes.added.map(Self.expected) == model.listed(.heartRate).sorted { $0.id < $1.id })
    }

    @Test("saving again across chunk and hour boundaries changes nothing; a sample between stored ones is new")
    func idempotentAcrossChunks() throws {
        let store = try Fixture.authorizedStore()
        // 1600 s across an hour (base is 400 s into one): chunks end at the most samples a chunk
        // holds (these are small enough never to meet the byte budget) and at the hour.
        let samples = try (0..<1600).map { try Fixture.heartRate(Double(60 + $0 % 50), at: Double($0) + 2_000) }
        #expect(try store.save(samples, from: Fixture.hrmd).stored == 1600)
        let before = try store.samples(SampleQuery(type: .heartRate))
        var random = SplitMix64(seed: 9)
        var shuffled = samples.shuffled(using: &random)
        while !shuffled.isEmpty {
            let batch = Array(shuffled.prefix(7))
            shuffled.removeFirst(batch.count)
            let report = try store.save(batch, from: Fixture.hrmd)
            #expect(report.stored == 0 && report.unchanged == batch.count)
        }
        #expect(try store.samples(SampleQuery(type: .heartRate)) == before)
        #expect(try store.save([try Fixture.heartRate(99, at: 3_000.5)], from: Fixture.hrmd).stored == 1)
        #expect(try store.sampleCount(of: .heartRate) == 1601)
        let counts = try store.read { try Int.fetchAll($0, sql: "SELECT count FROM series ORDER BY start") }
        let most = SeriesBlobs.maximumCount
        #expect(counts == [most, most, 1200 - 2 * most + 1, 400])  // the new sample joined the hour's open chunk
    }

    @Test("deleting inside a chunk rewrites it, and the anchored query reports exactly the deleted ids")
    func deletionInsideAChunk() throws {
        let store = try Fixture.authorizedStore()
        let samples = try (0..<600).map { try Fixture.heartRate(Double(60 + $0 % 40), at: Double($0)) }
        _ = try store.save(samples, from: Fixture.hrmd)
        let ids = try store.samples(SampleQuery(type: .heartRate)).map(\.id)
        let anchor = try store.currentAnchor()
        let deleted = try store.deleteSamples(
            of: .heartRate, source: Fixture.hrmd.name, since: Fixture.base.advanced(bySeconds: 100.5), until: Fixture.base.advanced(bySeconds: 400.5))
        #expect(deleted == 300)
        let changes = try store.changes(of: .heartRate, since: anchor)
        #expect(changes.added.isEmpty)
        #expect(changes.deleted.map(\.id) == Array(ids[101...400]))
        #expect(changes.deleted.map(\.anchor) == Array((anchor + 1)...(anchor + 300)))
        let left = try store.samples(SampleQuery(type: .heartRate))
        #expect(left.map(\.id) == Array(ids[0...100]) + Array(ids[401...]))
        let stats = try store.statistics(of: .heartRate, by: .seconds(3600))
        #expect(stats.map(\.count).reduce(0, +) == 300)
    }

    @Test("a higher sync version replaces its sample alone, leaving a tombstone, inside a live stream")
    func syncReplaceBesideAStream() throws {
        let store = try Fixture.authorizedStore()
        _ = try store.save(try (0..<10).map { try Fixture.heartRate(70, at: Double($0)) }, from: Fixture.hrmd)
        let version1 = try Fixture.heartRate(80, at: 4.5, metadata: SampleMetadata(syncIdentifier: "w", syncVersion: 1))
        #expect(try store.save([version1], from: Fixture.hrmd).stored == 1)
        let anchor = try store.currentAnchor()
        let version2 = try Fixture.heartRate(81, at: 4.5, metadata: SampleMetadata(syncIdentifier: "w", syncVersion: 2))
        let report = try store.save([version2], from: Fixture.hrmd)
        #expect(report.replaced == 1 && report.stored == 0)
        let changes = try store.changes(of: .heartRate, since: anchor)
        #expect(changes.deleted.map(\.id) == [anchor])
        #expect(changes.added.map(\.sample.canonicalValue) == [81])
        #expect(changes.added.first?.sample.metadata.syncVersion == 2)
        #expect(try store.samples(SampleQuery(type: .heartRate)).map(\.sample.canonicalValue) == [70, 70, 70, 70, 70, 81, 70, 70, 70, 70, 70])
        #expect(try store.save([version1], from: Fixture.hrmd).unchanged == 1)
    }

    @Test("a heartbeat series flags the beat after a missed one; HRV counts only beats not preceded by a gap")
    func heartbeatGaps() throws {
        let store = try Fixture.authorizedStore()
        // Beats end to end, 800 ms apart, except that one beat is missed after the tenth.
        var beats: [QuantitySample] = []
        var time = Fixture.base.microsecondsSinceEpoch
        for index in 0..<30 {
            let interval = 800.0 + Double(index % 3) * 1000 / 1024
            if index == 10 { time += 800_000 }
            let start = time
            time += Int64((interval * 1000).rounded())
            beats.append(try QuantitySample(
                type: .rrInterval, quantity: Quantity(unit: .millisecond, doubleValue: interval),
                start: Timestamp(microsecondsSinceEpoch: start), end: Timestamp(microsecondsSinceEpoch: time), device: Fixture.strap))
        }
        // As a strap's frames bring them: a few per save, newest first.
        for frame in stride(from: 0, to: beats.count, by: 3) { _ = try store.save(Array(beats[frame..<min(frame + 3, beats.count)].reversed()), from: Fixture.hrmd) }
        let flags = try store.read { db in
            try Row.fetchAll(db, sql: "SELECT \(SeriesRow.columns) FROM series").flatMap { try SeriesRow($0).points().precededByGap }
        }
        #expect(flags == [true] + Array(repeating: false, count: 9) + [true] + Array(repeating: false, count: 19))
        let variability = try #require(try store.heartRateVariability(SampleQuery(type: .rrInterval)))
        #expect(variability == HeartRateVariability(intervals: beats))
        #expect(variability.beats == 30)
        // Deleting a beat leaves a gap before the next.
        _ = try store.deleteSamples(of: .rrInterval, source: Fixture.hrmd.name, since: beats[20].start, until: beats[21].start)
        let after = try #require(try store.heartRateVariability(SampleQuery(type: .rrInterval)))
        #expect(after == HeartRateVariability(intervals: beats.enumerated().filter { $0.offset != 20 }.map(\.element)))
        // Listed one per beat, as saved.
        #expect(try store.samples(SampleQuery(type: .rrInterval)).map(\.sample) == beats.enumerated().filter { $0.offset != 20 }.map(\.element))
    }

    @Test("six hours of one strap at 1 Hz, and 15 minutes of 20 straps at 4 Hz, take at most 4 bytes a sample on disk")
    func bytesPerSample() throws {
        let directory = try TemporaryDirectory()
        var random = SplitMix64(seed: 4)
        func jitter() -> Int64 { Int64(random.next() % 60_001) - 30_000 }
        let oneStrap = try HealthStore.open(path: directory.file("one.sqlite"), mode: .createIfMissing)
        try oneStrap.setShareAuthorization(.sharingAuthorized, source: "hrmd", type: .heartRate)
        var bpm = 70.0
        for batch in 0..<(6 * 3600 / 600) {
            let samples = try (0..<600).map { index in
                bpm = min(180, max(50, bpm + Double(Int(random.next() % 3) - 1)))
                let time = Fixture.base.microsecondsSinceEpoch + Int64(batch * 600 + index) * 1_000_000 + jitter()
                return try QuantitySample(
                    type: .heartRate, quantity: Quantity(unit: .countPerMinute, doubleValue: bpm),
                    start: Timestamp(microsecondsSinceEpoch: time), end: Timestamp(microsecondsSinceEpoch: time), device: Fixture.strap,
                    metadata: SampleMetadata(sensorLocation: .chest))
            }
            _ = try oneStrap.save(samples, from: Fixture.hrmd)
        }
        let oneStrapBytes = try Self.bytesOnDisk(oneStrap) / (6 * 3600)
        #expect(oneStrapBytes <= 4, "\(oneStrapBytes) bytes a sample")

        let gym = try HealthStore.open(path: directory.file("gym.sqlite"), mode: .createIfMissing)
        try gym.setShareAuthorization(.sharingAuthorized, source: "hrmd", type: .heartRate)
        let straps = (1...20).map { HealthDevice(localIdentifier: "mock-\($0)") }
        var rates = Array(repeating: 90.0, count: 20)
        // Saved 5 s at a time (the chunks come out the same as with the daemon's half-second flushes).
        var samples: [QuantitySample] = []
        for flush in 0..<(900 * 2) {
            for (index, strap) in straps.enumerated() {
                for beat in 0..<2 {
                    rates[index] = min(180, max(50, rates[index] + Double(Int(random.next() % 3) - 1)))
                    let time = Fixture.base.microsecondsSinceEpoch + Int64(flush) * 500_000 + Int64(beat) * 250_000 + jitter() / 3
                    samples.append(try QuantitySample(
                        type: .heartRate, quantity: Quantity(unit: .countPerMinute, doubleValue: rates[index]),
                        start: Timestamp(microsecondsSinceEpoch: time), end: Timestamp(microsecondsSinceEpoch: time), device: strap))
                }
            }
            if flush % 10 == 9 {
                _ = try gym.save(samples, from: Fixture.hrmd)
                samples.removeAll()
            }
        }
        let gymBytes = try Self.bytesOnDisk(gym) / (900 * 4 * 20)
        #expect(gymBytes <= 4, "\(gymBytes) bytes a sample")
    }

    /// The bytes of the pages that hold the samples (table `series` and its indexes), room
    /// left free in them included: what grows with them, without the few pages every store
    /// has (`make bench` measures whole files).
    private static func bytesOnDisk(_ store: HealthStore) throws -> Double {
        try store.writer.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)")
            return try Double.fetchOne(db, sql: "SELECT SUM(pgsize) FROM dbstat WHERE name LIKE 'series%'") ?? .infinity
        }
    }

    @Test("a damaged chunk is a clear error, not a crash")
    func damagedChunk() throws {
        let store = try Fixture.authorizedStore()
        _ = try store.save(try (0..<50).map { try Fixture.heartRate(70, at: Double($0)) }, from: Fixture.hrmd)
        try store.write { try $0.execute(sql: "UPDATE series SET points = x'0151ff'") }
        #expect {
            try store.samples(SampleQuery(type: .heartRate))
        } throws: { error in
            guard case .damagedSeries = error as? HealthStoreError else { return false }
            return "\(error)".contains("damaged chunk")
        }
    }

    @Test("an upgrade converts every sample, reports its progress and removes the old table")
    func upgradeFromRows() throws {
        let queue = try DatabaseQueue()
        try Schema.migrator.migrate(queue, upTo: Schema.authorizationRequests)
        try queue.write { db in
            try Schema.registerTypes(db)
            try db.execute(sql: "INSERT INTO source (id, name) VALUES (1, 'hrmd'); INSERT INTO device (id, localIdentifier) VALUES (1, 'a')")
            for second in 0..<5000 {
                let start = Fixture.base.microsecondsSinceEpoch + Int64(second) * 1_000_000
                try db.execute(
                    sql: #"INSERT INTO sample (id, typeId, sourceId, deviceId, start, "end", value, sensorLocation) VALUES (?, 1, 1, 1, ?, ?, ?, ?)"#,
                    arguments: [second * 2 + 1, start, start, 60 + second % 50, second < 2500 ? 1 : 2])
            }
            try db.execute(sql: "UPDATE anchorSequence SET lastAnchor = 10000")
        }
        let heard = Mutex<[(Int, Int)]>([])
        let migrator = Schema.makeMigrator { done, total in heard.withLock { $0.append((done, total)) } }
        try migrator.migrate(queue)
        let store = try HealthStore(writer: queue)
        let samples = try store.samples(SampleQuery(type: .heartRate))
        let ids: [Int64] = (0..<5000).map { Int64($0) * 2 + 1 }
        #expect(samples.map(\.id) == ids)
        #expect(samples.map(\.sample.metadata.sensorLocation).filter { $0 == .chest }.count == 2500)
        #expect(heard.withLock { $0.last.map { $0.0 == 5000 && $0.1 == 5000 } } == true)
        #expect(try queue.read { try $0.tableExists("sample") || $0.tableExists("minuteRollup") } == false)
        try store.setShareAuthorization(.sharingAuthorized, source: Fixture.hrmd.name, type: .heartRate)
        #expect(try store.save([try Fixture.heartRate(70, at: 10, device: HealthDevice(localIdentifier: "a"))], from: Fixture.hrmd).unchanged == 1)
        #expect(try store.currentAnchor() == 10000)
    }
}
