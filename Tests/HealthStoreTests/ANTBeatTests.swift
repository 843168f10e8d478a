import GRDB
import HealthUnits
import Testing
import Timestamps

import HealthModel
@testable import HealthStore

@Suite("ANT+ beat stamps in the changes query")
struct ANTBeatTests {
    /// A heart-rate sample `offset` seconds after the base, stamped when `count` is given.
    private func beat(_ offset: Double, count: UInt8?) throws -> QuantitySample {
        var sample = try Fixture.heartRate(60, at: offset)
        sample.antBeat = count.map { ANTBeatStamp(count: $0, eventTime: UInt16(offset * 1024)) }
        return sample
    }

    private func rr(ending offset: Double, count: UInt8?) throws -> QuantitySample {
        let end = Fixture.base.advanced(bySeconds: offset)
        return try QuantitySample(
            type: .rrInterval, quantity: Quantity(unit: .second, doubleValue: 1), start: end.advanced(bySeconds: -1), end: end,
            device: Fixture.strap, antBeat: count.map { ANTBeatStamp(count: $0, eventTime: UInt16(offset * 1024)) })
    }

    private func stampRows(_ store: HealthStore) throws -> [Int64: Int32] {
        try store.read { db in
            Dictionary(uniqueKeysWithValues: try Row.fetchAll(db, sql: "SELECT anchor, stamp FROM antBeat").map { ($0[0], $0[1]) })
        }
    }

    @Test("saved stamps come back from changes, on the stamped samples only")
    func stampsComeBack() throws {
        let store = try Fixture.authorizedStore()
        let counts: [UInt8?] = [7, nil, 9, 10, nil]
        _ = try store.save(
            try counts.enumerated().map { try beat(Double($0.offset), count: $0.element) } + [try rr(ending: 3, count: 10)],
            from: Fixture.hrmd)
        let heartRates = try store.changes(of: .heartRate, since: 0)
        #expect(heartRates.added.map(\.sample.antBeat?.count) == counts)
        #expect(heartRates.added[3].sample.antBeat == ANTBeatStamp(count: 10, eventTime: 3072))
        #expect(try store.changes(of: .rrInterval, since: 0).added.map(\.sample.antBeat) == [ANTBeatStamp(count: 10, eventTime: 3072)])

        // Paging hears each stamp on its own page; other queries leave it out.
        let page = try store.changes(of: .heartRate, since: heartRates.added[1].id, limit: 2)
        #expect(page.added.map(\.sample.antBeat?.count) == [9, 10])
        #expect(try store.samples(SampleQuery(type: .heartRate)).allSatisfy { $0.sample.antBeat == nil })

        // Saving the same samples again stores nothing and keeps one row each.
        #expect(try store.save([try beat(0, count: 7)], from: Fixture.hrmd).unchanged == 1)
        #expect(try stampRows(store).count == 4)
    }

    @Test("stamps spread among many unstamped samples are found one by one")
    func sparseStamps() throws {
        let store = try Fixture.authorizedStore()
        _ = try store.save([try beat(0, count: 1)], from: Fixture.hrmd)
        _ = try store.save(try (1...40).map { try rr(ending: Double($0), count: nil) }, from: Fixture.hrmd)
        _ = try store.save([try beat(41, count: 2), try beat(42, count: nil)], from: Fixture.hrmd)
        let changes = try store.changes(of: .heartRate, since: 0)
        #expect(changes.added.map(\.sample.antBeat?.count) == [1, 2, nil])
        #expect(try store.changes(of: .rrInterval, since: 0).added.allSatisfy { $0.sample.antBeat == nil })
    }

    @Test("a store without ANT+ samples reports none")
    func noStamps() throws {
        let store = try Fixture.authorizedStore()
        _ = try store.save(try (0..<5).map { try beat(Double($0), count: nil) }, from: Fixture.hrmd)
        #expect(try store.changes(of: .heartRate, since: 0).added.allSatisfy { $0.sample.antBeat == nil })
        #expect(try stampRows(store).isEmpty)
    }

    @Test("deleting samples removes their stamps, and replacing a synced sample its stamp")
    func deletesRemoveStamps() throws {
        let store = try Fixture.authorizedStore()
        _ = try store.save(try (0..<6).map { try beat(Double($0), count: UInt8($0)) }, from: Fixture.hrmd)
        let added = try store.changes(of: .heartRate, since: 0).added
        #expect(try store.deleteSamples(of: .heartRate, source: "hrmd", until: Fixture.base.advanced(bySeconds: 2)) == 2)
        #expect(try stampRows(store).keys.sorted() == added.dropFirst(2).map(\.id))
        let after = try store.changes(of: .heartRate, since: 0)
        #expect(after.added.map(\.sample.antBeat?.count) == [2, 3, 4, 5])
        #expect(after.deleted.count == 2)
        try store.deleteSamples(of: .heartRate, source: "hrmd")
        #expect(try stampRows(store).isEmpty)

        var synced = try beat(10, count: 20)
        synced.metadata = SampleMetadata(syncIdentifier: "beat-10", syncVersion: 1)
        _ = try store.save([synced], from: Fixture.hrmd)
        synced.metadata.syncVersion = 2
        synced.antBeat = ANTBeatStamp(count: 21, eventTime: 5)
        #expect(try store.save([synced], from: Fixture.hrmd).replaced == 1)
        let replaced = try #require(try store.changes(of: .heartRate, since: 0).added.last)
        #expect(replaced.sample.antBeat == ANTBeatStamp(count: 21, eventTime: 5))
        #expect(try stampRows(store) == [replaced.id: ANTBeatStamp(count: 21, eventTime: 5).packed])
    }
}
