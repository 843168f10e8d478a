import Foundation
import GRDB
import HealthUnits
import Timestamps

/// Which samples to read: one type, a time range on the start, optional source and device.
public struct SampleQuery: Sendable, Hashable {
    public var type: SampleType
    /// Samples that start at or after this time.
    public var since: Timestamp?
    /// Samples that start before this time.
    public var until: Timestamp?
    /// Only this source's samples.
    public var source: String?
    /// Only this device's samples (its local identifier).
    public var device: String?
    public var limit: Int?
    /// Newest first instead of oldest first.
    public var newestFirst: Bool
    /// The source reading, when a program rather than the user reads: with read authorization
    /// for the type it sees every source's samples, without it only its own (combined with
    /// `source`, another source then gives nothing). nil reads as the store's owner (the
    /// user's own tools).
    public var reader: String?

    public init(
        type: SampleType, since: Timestamp? = nil, until: Timestamp? = nil, source: String? = nil,
        device: String? = nil, limit: Int? = nil, newestFirst: Bool = false, reader: String? = nil
    ) {
        self.type = type
        self.since = since
        self.until = until
        self.source = source
        self.device = device
        self.limit = limit
        self.newestFirst = newestFirst
        self.reader = reader
    }
}

extension HealthStore {
    /// The samples that match `query`, oldest first unless it asks for newest first.
    public func samples(_ query: SampleQuery) throws(HealthStoreError) -> [StoredSample] {
        var result: [StoredSample] = []
        try enumerateSamples(query) { result.append($0) }
        return result
    }

    /// Calls `body` with each sample that matches `query`, reading from one snapshot without
    /// holding them all in memory.
    public func enumerateSamples(_ query: SampleQuery, _ body: (StoredSample) throws -> Void) throws(HealthStoreError) {
        var conditions = ["s.typeId = ?"]
        var arguments: StatementArguments = [query.type.storageID]
        if let since = query.since {
            conditions.append("s.start >= ?")
            _ = arguments.append(contentsOf: [since.microsecondsSinceEpoch])
        }
        if let until = query.until {
            conditions.append("s.start < ?")
            _ = arguments.append(contentsOf: [until.microsecondsSinceEpoch])
        }
        if let source = query.source {
            conditions.append("s.sourceId = (SELECT id FROM source WHERE name = ?)")
            _ = arguments.append(contentsOf: [source])
        }
        if let device = query.device {
            conditions.append("s.deviceId = (SELECT id FROM device WHERE localIdentifier = ?)")
            _ = arguments.append(contentsOf: [device])
        }
        let order = query.newestFirst ? "DESC" : "ASC"
        try read { db in
            var conditions = conditions, arguments = arguments
            if let visible = try ReaderScope(reader: query.reader, type: query.type, db).condition(on: "s.sourceId") {
                conditions.append(visible.sql)
                _ = arguments.append(contentsOf: visible.arguments)
            }
            var sql = """
                SELECT \(SampleRow.columns) FROM sample s
                WHERE \(conditions.joined(separator: " AND ")) ORDER BY s.start \(order), s.id \(order)
                """
            if let limit = query.limit {
                sql += " LIMIT ?"
                _ = arguments.append(contentsOf: [limit])
            }
            var decoder = SampleRow()
            let rows = try Row.fetchCursor(db, sql: sql, arguments: arguments)
            while let row = try rows.next() { try body(decoder.decode(row, type: query.type, db)) }
        }
    }

    /// How many samples of `type` the store holds.
    public func sampleCount(of type: SampleType) throws(HealthStoreError) -> Int {
        try read { db in
            try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM sample WHERE typeId = ?", arguments: [type.storageID]) ?? 0
        }
    }
}

/// The one place that knows how a sample row maps to a `StoredSample`. It reads each source
/// and device once per query and reuses them for the rows that share them.
struct SampleRow {
    static let columns = """
        s.id, s.start, s."end", s.value, s.sensorLocation, s.sensorContact, s.metadata,
        s.syncIdentifier, s.syncVersion, s.sourceId, s.deviceId
        """

    private var sources: [Int64: HealthSource] = [:]
    private var devices: [Int64: HealthDevice] = [:]

    mutating func decode(_ row: Row, type: SampleType, _ db: Database) throws -> StoredSample {
        let sourceID: Int64 = row[9]
        let deviceID: Int64? = row[10]
        var extra: [String: String] = [:]
        if let json: String = row[6] {
            extra = (try? JSONDecoder().decode([String: String].self, from: Data(json.utf8))) ?? [:]
        }
        let location: Int? = row[4]
        let contact: Int? = row[5]
        let metadata = SampleMetadata(
            sensorLocation: location.flatMap(HeartRateSensorLocation.init(rawValue:)),
            sensorContact: contact.map { $0 != 0 },
            syncIdentifier: row[7], syncVersion: row[8], extra: extra)
        let sample = QuantitySample(
            stored: type, value: row[3],
            start: Timestamp(microsecondsSinceEpoch: row[1]), end: Timestamp(microsecondsSinceEpoch: row[2]),
            device: try deviceID.map { try device($0, db) }, metadata: metadata)
        return StoredSample(id: row[0], source: try source(sourceID, db), sample: sample)
    }

    private mutating func source(_ id: Int64, _ db: Database) throws -> HealthSource {
        if let known = sources[id] { return known }
        let row = try Row.fetchOne(db, sql: "SELECT name, version FROM source WHERE id = ?", arguments: [id])
        let source = HealthSource(name: row?[0] ?? "unknown", version: row?[1])
        sources[id] = source
        return source
    }

    private mutating func device(_ id: Int64, _ db: Database) throws -> HealthDevice {
        if let known = devices[id] { return known }
        let row = try Row.fetchOne(
            db,
            sql: """
                SELECT localIdentifier, name, manufacturer, model, hardwareVersion, firmwareVersion, softwareVersion
                FROM device WHERE id = ?
                """,
            arguments: [id])
        let device = HealthDevice(
            localIdentifier: row?[0] ?? "unknown", name: row?[1], manufacturer: row?[2], model: row?[3],
            hardwareVersion: row?[4], firmwareVersion: row?[5], softwareVersion: row?[6])
        devices[id] = device
        return device
    }
}
