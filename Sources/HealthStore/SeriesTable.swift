import Foundation
import GRDB

/// One row of table `series` as read: a chunk's key, shape and summary, and its samples still
/// encoded (decode them with `points(into:)` only when the summary is not enough).
struct SeriesRow {
    /// The columns `init(_:)` reads, in its order, for `SELECT … FROM series`.
    static let columns = """
        id, typeId, sourceId, deviceId, start, last, count, minimum, maximum, sum, duration,
        sensorLocation, sensorContact, metadata, syncIdentifier, syncVersion, tick, points, anchors
        """

    var id: Int64
    var key: SeriesKey
    var shape: ChunkShape
    /// The first and the last sample's start, microseconds.
    var start: Int64
    var last: Int64
    var summary: SeriesSummary
    var tick: Int64
    var pointsBlob: [UInt8]
    var anchorsBlob: [UInt8]

    init(_ row: Row) {
        id = row[0]
        key = SeriesKey(typeID: row[1], sourceID: row[2], deviceID: row[3])
        start = row[4]
        last = row[5]
        summary = SeriesSummary(count: row[6], minimum: row[7] ?? .nan, maximum: row[8] ?? .nan, sum: row[9] ?? .nan)
        let duration: Int64? = row[10]
        let location: Int? = row[11]
        let contact: Int? = row[12]
        let syncIdentifier: String? = row[14]
        shape = ChunkShape(
            span: duration.map(ChunkShape.Span.fixed) ?? .beat,
            sensorLocation: location.flatMap(HeartRateSensorLocation.init(rawValue:)),
            sensorContact: contact.map { $0 != 0 }, extra: row[13],
            sync: syncIdentifier.map { ChunkShape.SyncStamp(identifier: $0, version: row[15] ?? 0) })
        tick = row[16]
        pointsBlob = Self.bytes(row, 17)
        anchorsBlob = Self.bytes(row, 18)
    }

    private static func bytes(_ row: Row, _ index: Int) -> [UInt8] {
        let data: Data? = row[index]
        return data.map { [UInt8]($0) } ?? []
    }

    /// Decodes the samples into `points` (whose storage is reused).
    func points(into points: inout SeriesPoints) throws(HealthStoreError) {
        do {
            try SeriesBlobs.decode(points: pointsBlob, anchors: anchorsBlob, tick: tick, count: summary.count, into: &points)
        } catch {
            throw .damagedSeries(chunk: id, reason: error.description)
        }
    }

    /// The samples, decoded.
    func points() throws(HealthStoreError) -> SeriesPoints {
        var points = SeriesPoints()
        try self.points(into: &points)
        return points
    }
}

/// Writes chunks to table `series`: each write encodes the samples and their summary.
enum SeriesTable {
    /// The columns that follow from a chunk's samples, in the order of `sampleArguments`.
    private static let sampleColumns = ["start", "last", "count", "minimum", "maximum", "sum", "firstAnchor", "lastAnchor", "tick", "points", "anchors"]

    /// Adds a chunk; returns its row id.
    @discardableResult
    static func insert(key: SeriesKey, shape: ChunkShape, points: SeriesPoints, _ db: Database) throws -> Int64 {
        let columns = ["typeId", "sourceId", "deviceId", "duration", "sensorLocation", "sensorContact", "metadata", "syncIdentifier", "syncVersion"]
            + sampleColumns
        let statement = try db.cachedStatement(sql: """
            INSERT INTO series (\(columns.joined(separator: ", "))) VALUES (\(Array(repeating: "?", count: columns.count).joined(separator: ", ")))
            """)
        try statement.execute(arguments: [key.typeID, key.sourceID, key.deviceID] + shapeArguments(shape) + sampleArguments(points))
        return db.lastInsertedRowID
    }

    /// Replaces the samples of chunk `id` (same key and shape) with `points`, or deletes the
    /// row when none are left.
    static func rewrite(_ id: Int64, points: SeriesPoints, _ db: Database) throws {
        guard !points.isEmpty else {
            try db.execute(sql: "DELETE FROM series WHERE id = ?", arguments: [id])
            return
        }
        let statement = try db.cachedStatement(sql: """
            UPDATE series SET \(sampleColumns.map { "\($0) = ?" }.joined(separator: ", ")) WHERE id = ?
            """)
        try statement.execute(arguments: sampleArguments(points) + [id])
    }

    /// The values of `sampleColumns`: the samples encoded, with their span and summary.
    private static func sampleArguments(_ points: SeriesPoints) -> StatementArguments {
        let tick = SeriesBlobs.tick(for: points.starts)
        let summary = points.summary
        return [
            points.starts.first, points.starts.last, summary.count, summary.minimum, summary.maximum, summary.sum,
            points.anchors.min(), points.anchors.max(), tick, Data(SeriesBlobs.encodePoints(points, tick: tick)),
            Data(SeriesBlobs.encodeAnchors(points)),
        ]
    }

    private static func shapeArguments(_ shape: ChunkShape) -> StatementArguments {
        let duration: Int64? = switch shape.span {
        case .fixed(let duration): duration
        case .beat: nil
        }
        return [
            duration, shape.sensorLocation?.rawValue, shape.sensorContact.map { $0 ? 1 : 0 }, shape.extra,
            shape.sync?.identifier, shape.sync?.version,
        ]
    }
}
