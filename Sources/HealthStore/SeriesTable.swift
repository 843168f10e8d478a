import HealthModel
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

/// A chunk's samples encoded for its row: the values of the columns that follow from them
/// (`SeriesTable.sampleColumns`), made once whether the row is then measured or written.
struct EncodedChunk {
    /// The samples it holds.
    let count: Int
    /// In the order of `SeriesTable.sampleColumns`.
    let values: [DatabaseValue]

    /// The columns of a chunk of `count` samples starting from `first` to `last`, whose
    /// anchors lie in `anchors`, with its blobs.
    init(count: Int, first: Int64, last: Int64, summary: SeriesSummary, anchors: ClosedRange<Int64>, tick: Int64, points: [UInt8], anchorsBlob: [UInt8]) {
        self.count = count
        values = [
            first.databaseValue, last.databaseValue, summary.count.databaseValue, summary.minimum.databaseValue,
            summary.maximum.databaseValue, summary.sum.databaseValue, anchors.lowerBound.databaseValue,
            anchors.upperBound.databaseValue, tick.databaseValue, Data(points).databaseValue, Data(anchorsBlob).databaseValue,
        ]
    }

    /// The columns of a chunk of `points` (at least one), encoded in the codes that make it
    /// smallest.
    init(_ points: SeriesPoints) {
        let tick = SeriesBlobs.tick(for: points.starts)
        self.init(
            count: points.count, first: points.starts[0], last: points.starts[points.count - 1], summary: points.summary,
            anchors: (points.anchors.min() ?? 0)...(points.anchors.max() ?? 0), tick: tick,
            points: SeriesBlobs.encodePoints(points, tick: tick), anchorsBlob: SeriesBlobs.encodeAnchors(points))
    }
}

/// Writes chunks to table `series`.
enum SeriesTable {
    /// The columns that follow from a chunk's samples, in the order of `EncodedChunk.values`.
    static let sampleColumns = ["start", "last", "count", "minimum", "maximum", "sum", "firstAnchor", "lastAnchor", "tick", "points", "anchors"]
    /// The columns of a chunk's key and shape, in the order of `keyAndShapeValues`.
    private static let keyAndShapeColumns = [
        "typeId", "sourceId", "deviceId", "duration", "sensorLocation", "sensorContact", "metadata", "syncIdentifier", "syncVersion",
    ]

    /// Adds a chunk; returns its row id.
    @discardableResult
    static func insert(key: SeriesKey, shape: ChunkShape, chunk: EncodedChunk, _ db: Database) throws -> Int64 {
        let columns = keyAndShapeColumns + sampleColumns
        let statement = try db.cachedStatement(sql: """
            INSERT INTO series (\(columns.joined(separator: ", "))) VALUES (\(Array(repeating: "?", count: columns.count).joined(separator: ", ")))
            """)
        try statement.execute(arguments: arguments(keyAndShapeValues(key, shape) + chunk.values))
        return db.lastInsertedRowID
    }

    /// Adds a chunk of `points`; returns its row id.
    @discardableResult
    static func insert(key: SeriesKey, shape: ChunkShape, points: SeriesPoints, _ db: Database) throws -> Int64 {
        try insert(key: key, shape: shape, chunk: EncodedChunk(points), db)
    }

    /// Replaces the samples of chunk `id` (same key and shape) with those of `chunk`.
    static func rewrite(_ id: Int64, chunk: EncodedChunk, _ db: Database) throws {
        let statement = try db.cachedStatement(sql: """
            UPDATE series SET \(sampleColumns.map { "\($0) = ?" }.joined(separator: ", ")) WHERE id = ?
            """)
        try statement.execute(arguments: arguments(chunk.values + [id.databaseValue]))
    }

    /// The columns that change when samples are added after a chunk's others, with anchors
    /// after theirs, in the same ticks: its first start, first anchor and tick stay. An update
    /// that leaves `start` alone leaves index `seriesByTime` alone too.
    private static let appendedColumns = ["last", "count", "minimum", "maximum", "sum", "lastAnchor", "points", "anchors"]
    private static let appendedIndices = appendedColumns.compactMap { sampleColumns.firstIndex(of: $0) }

    /// Replaces the samples of chunk `id` with those of `chunk`, which holds them and more
    /// after them (with anchors after theirs, in the same ticks).
    static func rewriteAppended(_ id: Int64, chunk: EncodedChunk, _ db: Database) throws {
        let statement = try db.cachedStatement(sql: """
            UPDATE series SET \(appendedColumns.map { "\($0) = ?" }.joined(separator: ", ")) WHERE id = ?
            """)
        try statement.execute(arguments: arguments(appendedIndices.map { chunk.values[$0] } + [id.databaseValue]))
    }

    /// Statement arguments of database values. (Given an array, the compiler picks GRDB's
    /// `[Any]` initializer, which casts every value at run time: about 4% of hrmd's CPU with
    /// 20 straps.)
    private static func arguments<Values: Sequence<DatabaseValue>>(_ values: Values) -> StatementArguments {
        StatementArguments(values)
    }

    /// Replaces the samples of chunk `id` (same key and shape) with `points`, or deletes the
    /// row when none are left.
    static func rewrite(_ id: Int64, points: SeriesPoints, _ db: Database) throws {
        guard !points.isEmpty else {
            try db.execute(sql: "DELETE FROM series WHERE id = ?", arguments: [id])
            return
        }
        try rewrite(id, chunk: EncodedChunk(points), db)
    }

    /// The bytes the row of `chunk` takes in a leaf page of the table (`SQLiteRecord`); the
    /// row id of a new row is not known before it is added, and taken to need 3 bytes.
    static func cellBytes(key: SeriesKey, shape: ChunkShape, chunk: EncodedChunk, rowID: Int64?) -> Int {
        SQLiteRecord.cellBytes(payload: payloadBytes(key: key, shape: shape, chunk: chunk), rowID: rowID ?? 1 << 20)
    }

    /// The bytes of the record of a chunk's row.
    static func payloadBytes(key: SeriesKey, shape: ChunkShape, chunk: EncodedChunk) -> Int {
        // The record holds every column; `id`, the rowid, is NULL in it. Its size depends on
        // the values, not on their order.
        SQLiteRecord.payloadBytes(of: [.null] + keyAndShapeValues(key, shape) + chunk.values)
    }

    private static func keyAndShapeValues(_ key: SeriesKey, _ shape: ChunkShape) -> [DatabaseValue] {
        let duration: Int64? = switch shape.span {
        case .fixed(let duration): duration
        case .beat: nil
        }
        return [
            key.typeID.databaseValue, key.sourceID.databaseValue, key.deviceID.databaseValue,
            duration.databaseValue, shape.sensorLocation?.rawValue.databaseValue ?? .null,
            shape.sensorContact.map { $0 ? 1 : 0 }.databaseValue, shape.extra.databaseValue,
            shape.sync?.identifier.databaseValue ?? .null, shape.sync?.version.databaseValue ?? .null,
        ]
    }
}
