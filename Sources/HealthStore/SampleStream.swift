import HealthModel
import GRDB
import SeriesCoding
import Timestamps

/// What the samples of one chunk share when they are read back: who wrote them, what
/// measured them, their metadata (`shared`, for readers) and how their ends follow from their
/// starts. Chunks of one key and shape share one context; sources and devices are read once
/// per query.
struct ChunkContexts {
    private struct Key: Hashable {
        var sourceID: Int64
        var deviceID: Int64?
        var shape: ChunkShape
    }

    /// The contexts readers see, numbered as the points' `context`.
    private(set) var shared = SampleContexts()
    private var spans: [ChunkShape.Span] = []
    private var numbers: [Int] = []
    private var known: [Key: Int] = [:]
    private var sources: [Int64: HealthSource] = [:]
    private var devices: [Int64: HealthDevice] = [:]

    /// The number of `row`'s context, added when it is new.
    mutating func add(_ row: SeriesRow, _ db: Database) throws -> Int {
        try add(key: row.key, shape: row.shape, db)
    }

    /// The number of the context of a chunk with `key` and `shape`, added when it is new.
    mutating func add(key series: SeriesKey, shape: ChunkShape, _ db: Database) throws -> Int {
        let key = Key(sourceID: series.sourceID, deviceID: series.deviceID, shape: shape)
        if let index = known[key] { return index }
        let context = SampleContext(
            source: try source(series.sourceID, db),
            device: try series.deviceID.map { try device($0, of: series.sourceID, db) },
            metadata: shape.metadata())
        spans.append(shape.span)
        numbers.append(shared.index(of: context))
        known[key] = spans.count - 1
        return spans.count - 1
    }

    /// What the samples of chunk context `index` share.
    func context(_ index: Int) -> SampleContext { shared[numbers[index]] }

    /// The point at `start` with `value` and id `anchor` of a chunk added as context `index`.
    @inline(__always)
    func point(start: Int64, value: Double, anchor: Int64, context index: Int) -> StoredPoint {
        StoredPoint(
            id: anchor, start: Timestamp(microsecondsSinceEpoch: start),
            end: Timestamp(microsecondsSinceEpoch: spans[index].end(start: start, value: value)), value: value,
            context: numbers[index])
    }

    /// The sample at `start` with `value` and id `anchor` of a chunk of `type` added as `context`.
    func sample(type: SampleType, start: Int64, value: Double, anchor: Int64, context index: Int) -> StoredSample {
        StoredSample(point(start: start, value: value, anchor: anchor, context: index), type: type, contexts: shared)
    }

    private mutating func source(_ id: Int64, _ db: Database) throws -> HealthSource {
        if let known = sources[id] { return known }
        let row = try Row.fetchOne(db.cachedStatement(sql: "SELECT name, version FROM source WHERE id = ?"), arguments: [id])
        let source = HealthSource(name: row?[0] ?? "unknown", version: row?[1])
        sources[id] = source
        return source
    }

    /// Device record `id` of source `sourceID`: a chunk shows only its own source's record
    /// (one of another source, which a chunk never names, reads as unknown).
    private mutating func device(_ id: Int64, of sourceID: Int64, _ db: Database) throws -> HealthDevice {
        if let known = devices[id] { return known }
        let row = try Row.fetchOne(
            db.cachedStatement(sql: """
                SELECT localIdentifier, name, manufacturer, model, hardwareVersion, firmwareVersion, softwareVersion
                FROM device WHERE id = ? AND sourceId = ?
                """),
            arguments: [id, sourceID])
        let device = HealthDevice(
            localIdentifier: row?[0] ?? "unknown", name: row?[1], manufacturer: row?[2], model: row?[3],
            hardwareVersion: row?[4], firmwareVersion: row?[5], softwareVersion: row?[6])
        devices[id] = device
        return device
    }
}

/// The samples of a query's chunks as one stream ordered by (start, anchor), as one table
/// ordered them (``ChunkMerge``).
struct SampleStream {
    struct Item: MergedSample {
        var start: Int64
        var anchor: Int64
        var value: Double
        var precededByGap: Bool
        var context: Int

        var tieBreak: Int64 { anchor }
    }

    private var merge: ChunkMerge<Item>

    init(newestFirst: Bool) { merge = ChunkMerge(newestFirst: newestFirst) }

    /// Hands `emit` the buffered samples that no chunk starting at `nextChunkStart` or
    /// beyond (nil: no chunk is left) can precede; stops early when `emit` returns false, and
    /// then returns false.
    mutating func drain(beforeChunkAt nextChunkStart: Int64?, _ emit: (Item) throws -> Bool) rethrows -> Bool {
        try merge.drain(beforeChunkAt: nextChunkStart, emit)
    }

    /// Adds the points of a chunk that start in [since, until).
    mutating func add(_ points: SeriesPoints, since: Int64, until: Int64, context: Int) {
        let first = points.firstIndex(startingAtOrAfter: since)
        let end = points.firstIndex(startingAtOrAfter: until)
        guard first < end else { return }
        var items: [Item] = []
        items.reserveCapacity(end - first)
        for index in first..<end {
            items.append(Item(
                start: points.starts[index], anchor: points.anchors[index], value: points.values[index],
                precededByGap: points.precededByGap[index], context: context))
        }
        if merge.newestFirst { items.reverse() }
        merge.add(ordered: items)
    }
}
