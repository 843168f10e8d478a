import Foundation
import GRDB
import HealthUnits
import Testing
import TestSupport
import Timestamps

import HealthModel
@testable import HealthStore

/// Where chunks close: the row sizes the store computes are SQLite's, and a live stream's rows
/// fill their pages.
@Suite("Chunk budget", .serialized)
struct ChunkBudgetTests {
    /// The summed payload of the rows of table `series`, as SQLite reports it.
    private static func storedPayload(_ store: HealthStore) throws -> Int {
        try store.writer.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)")
            return try Int.fetchOne(db, sql: "SELECT SUM(payload) FROM dbstat WHERE name = 'series'") ?? -1
        }
    }

    private static func rows(_ store: HealthStore) throws -> [SeriesRow] {
        try store.read { db in try Row.fetchAll(db, sql: "SELECT \(SeriesRow.columns) FROM series ORDER BY id").map(SeriesRow.init) }
    }

    private static func sample(_ type: SampleType, _ value: Double, at micros: Int64, end: Int64? = nil, metadata: SampleMetadata = .empty) throws
        -> QuantitySample
    {
        try QuantitySample(
            type: type, quantity: Quantity(unit: type.canonicalUnit, doubleValue: value),
            start: Timestamp(microsecondsSinceEpoch: micros), end: Timestamp(microsecondsSinceEpoch: end ?? micros),
            device: Fixture.strap, metadata: metadata)
    }

    @Test("the size of a chunk's row, as the budget measures it, is the size SQLite stores")
    func recordSizeMatchesSQLite() throws {
        let directory = try TemporaryDirectory()
        let store = try HealthStore.open(path: directory.file("sizes.sqlite"), mode: .createIfMissing)
        for type in SampleType.all { try store.setShareAuthorization(.sharingAuthorized, source: Fixture.hrmd.name, type: type) }
        let base = Fixture.base.microsecondsSinceEpoch
        var random = SplitMix64(seed: 11)
        var batch: [QuantitySample] = []
        // Whole values of every integer width (0 and 1 take no bytes), fractions, extremes,
        // negative energy; metadata; a sync stamp; times far before 1970.
        let values: [Double] = [0, 1, -1, 127, 128, 40_000, 9e6, 3e9, 2e14, 1e300, -0.5, 812.5, .greatestFiniteMagnitude]
        for (index, value) in values.enumerated() {
            for offset in 0..<Int64(1 + index * 7) {
                batch.append(try Self.sample(.activeEnergyBurned, value + Double(offset), at: base + Int64(index) * 7_200_000_000 + offset * 1000))
            }
        }
        for beat in 0..<300 {
            let interval = Double(600 + random.next() % 500) * 1000 / 1024
            let start = base + Int64(beat) * 1_000_000
            batch.append(try Self.sample(.rrInterval, interval, at: start, end: start + Int64((interval * 1000).rounded())))
        }
        batch.append(try Self.sample(.heartRate, 61, at: -4_000_000_000_000, metadata: SampleMetadata(extra: ["note": String(repeating: "é", count: 90)])))
        batch.append(try Self.sample(.heartRate, 62, at: base, metadata: SampleMetadata(syncIdentifier: "workout-7", syncVersion: 3)))
        _ = try store.save(batch, from: Fixture.hrmd)

        var computed = 0
        for row in try Self.rows(store) {
            let chunk = EncodedChunk(try row.points())
            // The chunk encoded again is the row as stored.
            #expect(chunk.values[9] == Data(row.pointsBlob).databaseValue)
            #expect(chunk.values[10] == Data(row.anchorsBlob).databaseValue)
            computed += SeriesTable.payloadBytes(key: row.key, shape: row.shape, chunk: chunk)
        }
        #expect(computed == (try Self.storedPayload(store)))
    }

    @Test("the longest chunk is the longest run that fits its budget, for pages of every size", arguments: [512, 1024, 4096, 65536])
    func longestChunk(pageSize: Int) {
        var random = SplitMix64(seed: UInt64(pageSize))
        let budget = ChunkBudget(pageSize: pageSize)
        let key = SeriesKey(typeID: 1, sourceID: 1, deviceID: 1)
        let shape = ChunkShape(span: .fixed(0), sensorLocation: .chest, sensorContact: nil, extra: nil, sync: nil)
        func cellBytes(_ chunk: EncodedChunk) -> Int { SeriesTable.cellBytes(key: key, shape: shape, chunk: chunk, rowID: nil) }
        for round in 0..<20 {
            // Steady, jittery and random times; whole and fractional values.
            var points = SeriesPoints()
            var time = Fixture.base.microsecondsSinceEpoch
            for index in 0..<(600 + round) {
                time += [250_000, 250_000 + Int64(random.next() % 60_001) - 30_000, Int64(random.next() % 1_000_000_000)][round % 3]
                let value = round % 2 == 0 ? Double(60 + random.next() % 100) : Double(random.next() % 10_000) / 7
                points.append(start: time, value: value, anchor: Int64(index * 20 + 1), precededByGap: false)
            }
            for start in [0, 1, 333] {
                let chunk = budget.longestChunk(of: points, from: start, cellBytes: cellBytes)
                let available = min(points.count - start, SeriesBlobs.maximumCount)
                #expect(chunk.count >= 1 && chunk.count <= available)
                #expect(chunk.count == 1 || budget.admits(cellBytes: cellBytes(chunk)))
                if chunk.count < available {
                    let longer = EncodedChunk(points.selecting(start..<start + chunk.count + 1))
                    #expect(!budget.admits(cellBytes: cellBytes(longer)), "round \(round), page \(pageSize): \(chunk.count) of \(available)")
                }
            }
        }
    }

    @Test("a live stream's chunks close when their rows fill a quarter of a page, four to a page")
    func liveChunksFillPages() throws {
        let directory = try TemporaryDirectory()
        let store = try HealthStore.open(path: directory.file("live.sqlite"), mode: .createIfMissing)
        try store.setShareAuthorization(.sharingAuthorized, source: Fixture.hrmd.name, type: .heartRate)
        var random = SplitMix64(seed: 5)
        let straps = (1...3).map { HealthDevice(localIdentifier: "strap-\($0)") }
        var rates = [Double](repeating: 80, count: straps.count)
        // 4 Hz with ±30 ms of arrival jitter in microseconds: some 3 bytes a sample. 16 minutes,
        // saved every second, inside one UTC hour (base is 400 s into one).
        for second in 0..<960 {
            var batch: [QuantitySample] = []
            for beat in 0..<4 {
                for (index, strap) in straps.enumerated() {
                    rates[index] = min(180, max(50, rates[index] + Double(Int(random.next() % 3) - 1)))
                    let time = Fixture.base.microsecondsSinceEpoch + Int64(second) * 1_000_000 + Int64(beat) * 250_000
                        + Int64(random.next() % 60_001) - 30_000
                    batch.append(try QuantitySample(
                        type: .heartRate, quantity: Quantity(unit: .countPerMinute, doubleValue: rates[index]),
                        start: Timestamp(microsecondsSinceEpoch: time), end: Timestamp(microsecondsSinceEpoch: time), device: strap))
                }
            }
            _ = try store.save(batch, from: Fixture.hrmd)
        }
        let budget = try store.read { try ChunkBudget($0) }
        var lastOfKey: [Int64: Int64] = [:]
        let rows = try Self.rows(store)
        for row in rows { lastOfKey[row.key.deviceID ?? 0] = max(lastOfKey[row.key.deviceID ?? 0] ?? .min, row.start) }
        for row in rows {
            let cell = SeriesTable.cellBytes(key: row.key, shape: row.shape, chunk: EncodedChunk(try row.points()), rowID: row.id)
            #expect(cell <= budget.cellBytes)
            // Closed chunks are full: no room was left for another sample (a few bytes).
            if row.start != lastOfKey[row.key.deviceID ?? 0] { #expect(cell > budget.cellBytes - 12, "chunk \(row.id): \(cell) bytes") }
        }
        #expect(rows.count >= 3 * 10)
        let cellsPerPage = try store.writer.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)")
            return try Int.fetchAll(db, sql: "SELECT ncell FROM dbstat WHERE name = 'series' AND pagetype = 'leaf' ORDER BY pageno")
        }
        // Four rows to a page (the open chunks, still small, share the last).
        #expect(cellsPerPage.count <= rows.count / 4 + 1, "\(cellsPerPage)")
    }
}
