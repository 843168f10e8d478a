import Foundation
import HealthModel
import PostgresClient
import Timestamps
import SeriesCoding

/// One row of `CentralReader.chunkColumns`, its arrays decoded.
struct ChunkRow {
    static let columnCount = 13
    var id: Int64
    var gateway: Int32
    var source: Int32
    var device: Int32?
    var duration: Int64?
    var metadata: SampleMetadata
    var firstStart: Int64
    var lastAnchor: Int64
    var starts: [Int64]
    var values: [Double]
    var anchors: [Int64]

    init(_ rows: PostgresResult, _ row: Int) throws(PostgresError) {
        id = try rows.int64(row, 0)
        gateway = Int32(try rows.int64(row, 1))
        source = Int32(try rows.int64(row, 2))
        device = rows.isNull(row, 3) ? nil : Int32(try rows.int64(row, 3))
        duration = rows.isNull(row, 4) ? nil : try rows.int64(row, 4)
        metadata = Self.metadata(
            location: rows.isNull(row, 5) ? nil : try rows.int(row, 5), contact: rows.isNull(row, 6) ? nil : try rows.bool(row, 6),
            extra: rows.string(row, 7))
        firstStart = try rows.int64(row, 8)
        lastAnchor = try rows.int64(row, 9)
        starts = try rows.int64Elements(row, 10)
        values = try rows.doubleElements(row, 11)
        anchors = try rows.int64Elements(row, 12)
    }

    static func metadata(location: Int?, contact: Bool?, extra: String?) -> SampleMetadata {
        var decoded: [String: String] = [:]
        if let extra, let object = try? JSONDecoder().decode([String: String].self, from: Data(extra.utf8)) { decoded = object }
        return SampleMetadata(
            sensorLocation: location.flatMap(HeartRateSensorLocation.init(rawValue:)), sensorContact: contact, extra: decoded)
    }
}

/// The names behind the central ids: gateways, sources and devices, read once per query
/// (again only when a row names an id not yet known).
struct Names {
    var gateways: [Int32: String] = [:]
    var sources: [Int32: HealthSource] = [:]
    var devices: [Int32: HealthDevice] = [:]

    mutating func load(_ connection: PostgresConnection) throws(PostgresError) {
        let gatewayRows = try connection.execute("SELECT id, name FROM hrmd.gateway")
        for row in 0..<gatewayRows.rowCount { gateways[Int32(try gatewayRows.int64(row, 0))] = gatewayRows.string(row, 1) }
        let sourceRows = try connection.execute("SELECT id, name, version FROM hrmd.source")
        for row in 0..<sourceRows.rowCount {
            sources[Int32(try sourceRows.int64(row, 0))] = HealthSource(name: sourceRows.string(row, 1) ?? "", version: sourceRows.string(row, 2))
        }
        let deviceRows = try connection.execute("""
            SELECT id, identifier, name, manufacturer, model, hardware_version, firmware_version, software_version FROM hrmd.device
            """)
        for row in 0..<deviceRows.rowCount {
            devices[Int32(try deviceRows.int64(row, 0))] = HealthDevice(
                localIdentifier: deviceRows.string(row, 1) ?? "", name: deviceRows.string(row, 2), manufacturer: deviceRows.string(row, 3),
                model: deviceRows.string(row, 4), hardwareVersion: deviceRows.string(row, 5), firmwareVersion: deviceRows.string(row, 6),
                softwareVersion: deviceRows.string(row, 7))
        }
    }

    func source(_ id: Int32) -> HealthSource { sources[id] ?? HealthSource(name: "unknown") }
    func device(_ id: Int32) -> HealthDevice { devices[id] ?? HealthDevice(localIdentifier: "unknown") }
}

/// The contexts of one query's samples, numbered as `SampleContexts` numbers them.
struct ContextTable {
    private(set) var shared = SampleContexts()

    mutating func number(gateway: String?, source: HealthSource, device: HealthDevice?, metadata: SampleMetadata) -> Int {
        shared.index(of: SampleContext(source: source, device: device, metadata: metadata, gateway: gateway))
    }
}

/// The samples of a query's chunks as one stream ordered by (start, id), as the local store
/// orders its own (``ChunkMerge``).
struct MergeStream {
    struct Item: MergedSample {
        var start: Int64
        var end: Int64
        var id: Int64
        var value: Double
        var context: Int

        var tieBreak: Int64 { id }
    }

    private var merge: ChunkMerge<Item>

    init(newestFirst: Bool) { merge = ChunkMerge(newestFirst: newestFirst) }

    mutating func drain(beforeChunkAt nextChunkStart: Int64?, _ emit: (Item) -> Bool) -> Bool {
        merge.drain(beforeChunkAt: nextChunkStart, emit)
    }

    /// Adds items in any order.
    mutating func add(_ added: [Item]) { merge.add(unordered: added) }
}

/// What a sample query asks besides type and range, as SQL conditions on `c` or `x` columns
/// `source_id` and `device_id`.
struct Filter {
    var conditions: [String] = []
    var arguments: [String?] = []

    init(query: SampleQuery, since: Int64, until: Int64) {
        if let source = query.source {
            conditions.append("source_id = (SELECT id FROM hrmd.source WHERE name = $%)")
            arguments.append(source)
        }
        if let device = query.device {
            conditions.append("device_id = (SELECT id FROM hrmd.device WHERE identifier = $%)")
            arguments.append(device)
        }
    }

    /// The conditions, each starting with AND, numbered from `$first`.
    func sql(_ first: Int) -> String {
        var number = first
        return conditions.map { condition in
            defer { number += 1 }
            return "AND " + condition.replacingOccurrences(of: "$%", with: "$\(number)")
        }.joined(separator: " ")
    }
}
