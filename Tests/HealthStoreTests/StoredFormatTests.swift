import Foundation
import GRDB
import HealthUnits
import Testing
import TestSupport
import Timestamps

import HealthModel
@testable import HealthStore

/// Stores hold chunks in every series format version hrmd has written.
@Suite("Chunks of older series formats")
struct StoredFormatTests {
    /// A chunk row as hrmd wrote it before series format version 2 (22 heart rates of one
    /// strap in microsecond ticks, from a 20-strap recording), and what it holds.
    private enum FormatOne {
        static let points = """
            0151164867c9e351e9518300ed00e1ba0791e44029822babf1bfcb80000760c627965348c9acd8acf14ae4b708eaf5c2c04a568140ea988ac4d\
            714271635886bdf1b9d00
            """
        static let anchors = "014816007441918a00875b4235b8e8a4d2c4b4e4"
        static let starts: [Int64] = [
            1767229194662856, 1767229194905538, 1767229195188035, 1767229195391354, 1767229195643773, 1767229195903747,
            1767229196143561, 1767229196434078, 1767229196648775, 1767229196936729, 1767229197178559, 1767229197442692,
            1767229197640347, 1767229197895583, 1767229198167154, 1767229198402954, 1767229198642807, 1767229198900182,
            1767229199144096, 1767229199432709, 1767229199671320, 1767229199930808,
        ]
        static let values: [Double] = Array(repeating: 109, count: 17) + Array(repeating: 108, count: 5)
        static let ids: [Int64] = [
            286964, 286982, 287005, 287021, 287042, 287062, 287081, 287105, 287122, 287145, 287164, 287185, 287203, 287222, 287244,
            287261, 287281, 287302, 287320, 287343, 287362, 287382,
        ]
    }

    private static func bytes(_ hex: String) -> Data { Data([UInt8](hex: hex)) }

    @Test("a chunk of format version 1 reads as written, and a save extends it in the current version")
    func formatOneChunk() throws {
        let store = try Fixture.authorizedStore()
        try store.write { db in
            try db.execute(sql: "INSERT OR IGNORE INTO source (name) VALUES (?)", arguments: [Fixture.hrmd.name])
            try db.execute(sql: "INSERT INTO device (sourceId, localIdentifier) VALUES ((SELECT id FROM source WHERE name = ?), ?)", arguments: [Fixture.hrmd.name, Fixture.strap.localIdentifier])
            try db.execute(sql: "UPDATE anchorSequence SET lastAnchor = 287382")
            try db.execute(
                sql: """
                    INSERT INTO series (typeId, sourceId, deviceId, start, last, count, minimum, maximum, sum, firstAnchor, lastAnchor,
                                        duration, tick, points, anchors)
                    VALUES (1, (SELECT id FROM source WHERE name = ?), (SELECT id FROM device WHERE localIdentifier = ?), ?, ?, 22,
                            108, 109, 2393, 286964, 287382, 0, 1, ?, ?)
                    """,
                arguments: [
                    Fixture.hrmd.name, Fixture.strap.localIdentifier, FormatOne.starts[0], FormatOne.starts[21],
                    Self.bytes(FormatOne.points), Self.bytes(FormatOne.anchors),
                ])
        }
        let stored = try store.samples(SampleQuery(type: .heartRate))
        #expect(stored.map(\.id) == FormatOne.ids)
        #expect(stored.map(\.sample.start.microsecondsSinceEpoch) == FormatOne.starts)
        #expect(stored.map(\.sample.canonicalValue) == FormatOne.values)
        #expect(try store.statistics(of: .heartRate, by: .seconds(60)).map(\.count).reduce(0, +) == 22)

        let next = Timestamp(microsecondsSinceEpoch: FormatOne.starts[21] + 50_000)  // the hour ends 69 ms after the last
        let sample = try QuantitySample(
            type: .heartRate, quantity: Quantity(unit: .countPerMinute, doubleValue: 107), start: next, end: next, device: Fixture.strap)
        #expect(try store.save([sample], from: Fixture.hrmd).stored == 1)
        #expect(try store.save(stored.map(\.sample), from: Fixture.hrmd).unchanged == 22)
        let row = try #require(try store.read { db in try Row.fetchOne(db, sql: "SELECT \(SeriesRow.columns) FROM series").map(SeriesRow.init) })
        #expect(row.summary.count == 23)
        #expect(row.pointsBlob.first == 2 && row.anchorsBlob.first == 2)
        let after = try store.samples(SampleQuery(type: .heartRate))
        #expect(after.map(\.id) == FormatOne.ids + [287383])
        #expect(after.map(\.sample.canonicalValue) == FormatOne.values + [107])
        #expect(after.map(\.sample.start.microsecondsSinceEpoch) == FormatOne.starts + [next.microsecondsSinceEpoch])
    }
}
