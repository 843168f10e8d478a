import Foundation
import TestSupport
import GRDB
import HealthUnits
import Testing
import Timestamps

import HealthModel
@testable import HealthStore

@Suite("Statistics and minute rollups")
struct StatisticsTests {
    /// Statistics computed straight from the samples, for comparison.
    func expected(_ samples: [StoredSample], width: Int64, since: Timestamp, until: Timestamp) -> [Int64: (Int, Double, Double, Double)] {
        var buckets: [Int64: [Double]] = [:]
        for stored in samples where stored.sample.start >= since && stored.sample.start < until {
            let seconds = Int64((stored.sample.start.secondsSinceEpoch).rounded(.down))
            buckets[seconds - ((seconds % width) + width) % width, default: []].append(stored.sample.canonicalValue)
        }
        return buckets.mapValues { ($0.count, $0.min()!, $0.reduce(0, +) / Double($0.count), $0.max()!) }
    }

    func check(_ store: HealthStore, width: Int64, since: Timestamp, until: Timestamp) throws {
        let all = try store.samples(SampleQuery(type: .heartRate))
        let want = expected(all, width: width, since: since, until: until)
        let got = try store.statistics(of: .heartRate, by: .seconds(width), since: since, until: until)
        #expect(got.count == want.count)
        for bucket in got {
            let key = bucket.start.microsecondsSinceEpoch / 1_000_000
            guard let (count, low, average, high) = want[key] else {
                Issue.record("unexpected bucket \(bucket.start)")
                continue
            }
            #expect(bucket.count == count && bucket.minimum == low && bucket.maximum == high)
            #expect(abs(bucket.average - average) < 1e-9)
        }
    }

    @Test("rollups agree with the samples after saves, deletions and replacements, on unaligned ranges")
    func rollupsAgree() throws {
        let store = try Fixture.authorizedStore()
        var generator = SplitMix64(seed: 5)
        var samples: [QuantitySample] = []
        for index in 0..<2000 {
            let offset = Double(index) * 0.7 + Double(generator.next() % 1000) / 2000
            samples.append(try Fixture.heartRate(Double(50 + generator.next() % 120), at: offset))
        }
        _ = try store.save(samples, from: Fixture.hrmd)
        let since = Fixture.base.advanced(bySeconds: 37.25), until = Fixture.base.advanced(bySeconds: 1301.5)
        for width in [60, 300, 3600] as [Int64] { try check(store, width: width, since: since, until: until) }

        try store.deleteSamples(of: .heartRate, source: "hrmd", since: Fixture.base.advanced(bySeconds: 100.5), until: Fixture.base.advanced(bySeconds: 400.2))
        let synced = try Fixture.heartRate(200, at: 500.5, metadata: SampleMetadata(syncIdentifier: "x", syncVersion: 1))
        _ = try store.save([synced], from: Fixture.hrmd)
        _ = try store.save([try Fixture.heartRate(40, at: 900.5, metadata: SampleMetadata(syncIdentifier: "x", syncVersion: 2))], from: Fixture.hrmd)
        for width in [60, 300] as [Int64] { try check(store, width: width, since: since, until: until) }
        try check(store, width: 60, since: Fixture.base, until: Fixture.base.advanced(bySeconds: 100_000))
    }

    @Test("statistics over 2,000 ranges of one strap (a person's assignments) count the samples in them alone, by minutes and by days")
    func manyRanges() throws {
        let store = try Fixture.authorizedStore()
        let other = HealthDevice(localIdentifier: "11:22:33:44:55:66")
        var samples: [QuantitySample] = []
        for second in 0..<20_000 {
            samples.append(try Fixture.heartRate(Double(50 + (second * 7) % 130), at: Double(second) * 4.5))
            samples.append(try Fixture.heartRate(200, at: Double(second) * 4.5, device: other))
        }
        _ = try store.save(samples, from: Fixture.hrmd)
        // 2,000 ranges of 20 s, 45 s apart: more than SQLite's depth of one OR expression.
        let ranges = (0..<2000).map { (Fixture.base.advanced(bySeconds: Double($0) * 45), Fixture.base.advanced(bySeconds: Double($0) * 45 + 20)) }
        let queries = ranges.map { SampleQuery(type: .heartRate, since: $0.0, until: $0.1, device: Fixture.strap.localIdentifier) }
        let inRanges = samples.filter { sample in
            sample.device == Fixture.strap && ranges.contains { sample.start >= $0.0 && sample.start < $0.1 }
        }.map(\.canonicalValue)
        for bucket in [StatisticsBucket.seconds(60), .days(TimeZone(identifier: "America/St_Johns")!)] {
            let got = try store.statistics(queries, by: bucket)
            #expect(got.reduce(0) { $0 + $1.count } == inRanges.count, "\(bucket)")
            #expect(got.map(\.minimum).min() == inRanges.min() && got.map(\.maximum).max() == inRanges.max(), "\(bucket)")
            #expect(abs(got.reduce(0) { $0 + $1.sum } - inRanges.reduce(0, +)) < 1e-6, "\(bucket)")
        }
    }

    @Test("more non-empty buckets than one answer holds is refused with limitReached; wider buckets are answered")
    func bucketBudget() throws {
        let store = try Fixture.authorizedStore()
        let count = StatisticsBucket.maximumCount + 1
        var samples: [QuantitySample] = []
        samples.reserveCapacity(count)
        for index in 0..<count { samples.append(try Fixture.heartRate(Double(60 + index % 90), at: Double(index))) }
        for batch in stride(from: 0, to: count, by: 10_000) {
            _ = try store.save(Array(samples[batch..<min(batch + 10_000, count)]), from: Fixture.hrmd)
        }
        #expect(throws: HealthStoreError.limitReached(StatisticsBucket.tooManyBuckets)) {
            try store.statistics(of: .heartRate, by: .seconds(1))
        }
        #expect(try store.statistics(of: .heartRate, by: .seconds(1800)).map(\.count).reduce(0, +) == count)
        // One bucket fewer is answered whole.
        let until = Fixture.base.advanced(bySeconds: Double(StatisticsBucket.maximumCount))
        #expect(try store.statistics(of: .heartRate, by: .seconds(1), until: until).count == StatisticsBucket.maximumCount)
    }

    @Test("an upgraded store builds its rollups from the samples it has")
    func rollupsFromMigration() throws {
        let queue = try DatabaseQueue()
        try Schema.migrator.migrate(queue, upTo: Schema.syncAndTombstones)
        try queue.write { db in
            try Schema.registerTypes(db)
            try db.execute(sql: "INSERT INTO source (id, name) VALUES (1, 'hrmd')")
            for second in 0..<120 {
                try db.execute(
                    sql: #"INSERT INTO sample (typeId, sourceId, start, "end", value) VALUES (1, 1, ?, ?, ?)"#,
                    arguments: [1_795_000_000_000_000 + Int64(second) * 1_000_000, 1_795_000_000_000_000 + Int64(second) * 1_000_000, 60 + second % 10])
            }
        }
        let store = try HealthStore(writer: queue)
        let buckets = try store.statistics(of: .heartRate, by: .seconds(60))
        #expect(buckets.map(\.count) == [20, 60, 40])  // 1_795_000_000 s is 40 s into a minute
        #expect(buckets.allSatisfy { $0.minimum == 60 && $0.maximum == 69 })
    }
}
