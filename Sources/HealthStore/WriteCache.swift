import GRDB
import SeriesCoding
import Synchronization

/// What a store's saves remember from one to the next, so that a live stream's flush costs
/// about its new samples: each group's open chunk as the last save wrote it (decoded, its
/// encoders carried on), the latest start stored in each group (a batch after it needs no
/// identity lookup), and the rows of the sources and devices saved.
///
/// It is only as good as what it remembers is true. Another connection's commit (another
/// process, another `HealthStore` on the file) changes `PRAGMA data_version`, which a save
/// reads first: any change and it starts afresh. Writes of this store that change chunks
/// other than by saving (`deleteSamples`) empty it. A save takes it for its transaction and
/// gives back what it learnt only once the transaction commits; a rollback leaves it empty.
final class WriteCache: Sendable {
    private let contents = Mutex<Contents?>(nil)

    struct Contents: Sendable {
        /// `PRAGMA data_version` when the contents were last true.
        var dataVersion: Int64
        /// The store's page size, for `ChunkBudget`.
        var pageSize: Int
        var openChunks: [SeriesGroup: OpenChunk] = [:]
        /// For each group seen, a start no stored sample of the group comes after.
        var latestStarts: [SeriesGroup: Int64] = [:]
        var sources: [HealthSource: Int64] = [:]
        /// Each device as a save last wrote it to its row, by local identifier, and the row id.
        var devices: [String: (device: HealthDevice, id: Int64)] = [:]
    }

    /// The contents for a write transaction on `db`: what is remembered if nobody else has
    /// written since, else an empty start. Until `keep`, the cache holds nothing.
    func take(_ db: Database) throws -> Contents {
        let version = try Int64.fetchOne(db.cachedStatement(sql: "PRAGMA data_version")) ?? 0
        if let remembered = contents.withLock({ $0.take() }), remembered.dataVersion == version { return remembered }
        return Contents(dataVersion: version, pageSize: try Int.fetchOne(db.cachedStatement(sql: "PRAGMA page_size")) ?? 4096)
    }

    /// Remembers `remembered` once the transaction of `db` commits.
    func keep(_ remembered: Contents, after db: Database) {
        db.afterNextTransaction { _ in
            self.contents.withLock { $0 = remembered }
        }
    }

    /// Forgets everything (a write changed chunks other than by saving).
    func clear() {
        contents.withLock { $0 = nil }
    }
}

/// The chunks of one key in one UTC hour: a sample's chunk is among those of its group.
struct SeriesGroup: Hashable, Sendable {
    var key: SeriesKey
    var hour: Int64

    init(_ key: SeriesKey, start: Int64) {
        self.key = key
        hour = SeriesBlobs.hour(of: start)
    }
}

/// A group's open chunk (the one new samples of the hour go into) as a save wrote it: its
/// row, its samples, and the encoders of its blobs, which carry each flush's new samples on.
struct OpenChunk: Sendable {
    let id: Int64
    let shape: ChunkShape
    private(set) var points: SeriesPoints
    private(set) var summary: SeriesSummary
    let tick: Int64
    private var firstAnchor: Int64
    private var lastAnchor: Int64
    private var pointsEncoder = QuantitySeriesEncoder()
    private var anchorsEncoder = HeartbeatSeriesEncoder()

    /// The chunk of row `id` holding `points` (at least one).
    init(id: Int64, shape: ChunkShape, points: SeriesPoints) {
        self.id = id
        self.shape = shape
        self.points = points
        summary = points.summary
        tick = SeriesBlobs.tick(for: points.starts)
        firstAnchor = points.anchors.min() ?? 0
        lastAnchor = points.anchors.max() ?? 0
        pointsEncoder.reserveCapacity(SeriesBlobs.maximumCount)
        anchorsEncoder.reserveCapacity(SeriesBlobs.maximumCount)
        for index in 0..<points.count {
            pointsEncoder.append(time: points.starts[index] / tick, value: points.values[index])
            anchorsEncoder.append(offset: points.anchors[index], precededByGap: points.precededByGap[index])
        }
    }

    /// Whether a sample starting at `start` can be added after the others: it starts after
    /// them, in a whole number of the chunk's ticks.
    func takes(start: Int64) -> Bool {
        start > points.starts[points.count - 1] && start % tick == 0
    }

    /// Adds a sample after the others (`takes(start:)` says it may be).
    mutating func append(start: Int64, value: Double, anchor: Int64, precededByGap: Bool) {
        points.append(start: start, value: value, anchor: anchor, precededByGap: precededByGap)
        summary.add(value)
        firstAnchor = min(firstAnchor, anchor)
        lastAnchor = max(lastAnchor, anchor)
        pointsEncoder.append(time: start / tick, value: value)
        anchorsEncoder.append(offset: anchor, precededByGap: precededByGap)
    }

    /// The row's sample columns, the blobs carried on from the last ones
    /// (`QuantitySeriesEncoder.encodedAppending()`).
    mutating func encoded() -> EncodedChunk {
        EncodedChunk(
            count: points.count, first: points.starts[0], last: points.starts[points.count - 1], summary: summary,
            anchors: firstAnchor...lastAnchor, tick: tick, points: pointsEncoder.encodedAppending(),
            anchorsBlob: anchorsEncoder.encodedAppending())
    }
}
