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
    /// The source reading, when a program rather than the user reads: it needs read
    /// authorization for the type. nil reads as the store's owner (the user's own tools).
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
            conditions.append("src.name = ?")
            _ = arguments.append(contentsOf: [source])
        }
        if let device = query.device {
            conditions.append("d.localIdentifier = ?")
            _ = arguments.append(contentsOf: [device])
        }
        let order = query.newestFirst ? "DESC" : "ASC"
        var sql = """
            SELECT \(SampleRow.columns) FROM sample s
            JOIN source src ON src.id = s.sourceId LEFT JOIN device d ON d.id = s.deviceId
            WHERE \(conditions.joined(separator: " AND ")) ORDER BY s.start \(order), s.id \(order)
            """
        if let limit = query.limit {
            sql += " LIMIT ?"
            _ = arguments.append(contentsOf: [limit])
        }
        try read { db in
            if let reader = query.reader, try Self.readStatus(source: reader, type: query.type, db) != .sharingAuthorized {
                throw HealthStoreError.readNotAuthorized(source: reader, type: query.type.identifier)
            }
            let rows = try Row.fetchCursor(db, sql: sql, arguments: arguments)
            while let row = try rows.next() { try body(SampleRow.decode(row, type: query.type)) }
        }
    }

    /// How many samples of `type` the store holds.
    public func sampleCount(of type: SampleType) throws(HealthStoreError) -> Int {
        try read { db in
            try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM sample WHERE typeId = ?", arguments: [type.storageID]) ?? 0
        }
    }
}

/// The one place that knows how a sample row maps to a `StoredSample`.
enum SampleRow {
    static let columns = """
        s.id, s.start, s."end", s.value, s.sensorLocation, s.sensorContact, s.metadata,
        s.syncIdentifier, s.syncVersion, src.name, src.version, d.localIdentifier, d.name,
        d.manufacturer, d.model, d.hardwareVersion, d.firmwareVersion, d.softwareVersion
        """

    static func decode(_ row: Row, type: SampleType) throws -> StoredSample {
        var device: HealthDevice?
        if let identifier: String = row[11] {
            device = HealthDevice(
                localIdentifier: identifier, name: row[12], manufacturer: row[13], model: row[14],
                hardwareVersion: row[15], firmwareVersion: row[16], softwareVersion: row[17])
        }
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
        let sample = try QuantitySample(
            type: type, quantity: Quantity(unit: type.canonicalUnit, doubleValue: row[3]),
            start: Timestamp(microsecondsSinceEpoch: row[1]), end: Timestamp(microsecondsSinceEpoch: row[2]),
            device: device, metadata: metadata)
        return StoredSample(id: row[0], source: HealthSource(name: row[9], version: row[10]), sample: sample)
    }
}
