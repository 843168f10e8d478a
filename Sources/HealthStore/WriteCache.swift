import HealthModel
import GRDB
import SeriesCoding
import Synchronization

/// What a store's saves remember from one to the next, so that a live stream's flush costs
/// about its new samples: each group's open chunk as the last save wrote it (decoded, its
/// encoders carried on), the latest start stored in each group (a batch after it needs no
/// identity lookup), and the rows of the sources and (each source's own) devices saved.
///
/// It is only as good as what it remembers is true. Another connection's commit (another
/// process, another `HealthStore` on the file) changes `PRAGMA data_version`, which a save
/// reads first: any change and it starts afresh. Writes of this store that change chunks
/// other than by saving (`deleteSamples`) empty it. A save takes it for its transaction and
/// gives back what it learnt only once the transaction commits; a rollback leaves it empty.
final class WriteCache: Sendable {
    private let contents = Mutex<Contents?>(nil)

    /// What is remembered. Of each key only its latest hour is (a live stream moves on from
    /// hour to hour; late samples for an earlier one are looked up), so it holds one open
    /// chunk per strap and type at most, however long the daemon runs.
    struct Contents: Sendable {
        /// `PRAGMA data_version` when the contents were last true.
        var dataVersion: Int64
        /// The store's page size, for `ChunkBudget`.
        var pageSize: Int
        private var openChunks: [SeriesKey: OpenChunk] = [:]
        /// For the latest hour of each key seen, a start no stored sample of the group comes after.
        private var latestStarts: [SeriesKey: (hour: Int64, start: Int64)] = [:]
        var sources: [HealthSource: Int64] = [:]
        /// Each device as a save last wrote it to its row, by source and local identifier (a
        /// source's record is its own), and the row id.
        var devices: [DeviceKey: (device: HealthDevice, id: Int64)] = [:]

        init(dataVersion: Int64, pageSize: Int) {
            self.dataVersion = dataVersion
            self.pageSize = pageSize
        }

        var openChunkCount: Int { openChunks.count }
        var latestStartCount: Int { latestStarts.count }

        /// The open chunk of `group`, if remembered.
        func openChunk(of group: SeriesGroup) -> OpenChunk? {
            openChunks[group.key].flatMap { $0.hour == group.hour ? $0 : nil }
        }

        /// The open chunk of `group`, no longer remembered (so that it grows in place).
        mutating func takeOpenChunk(of group: SeriesGroup) -> OpenChunk? {
            guard openChunks[group.key]?.hour == group.hour else { return nil }
            return openChunks.removeValue(forKey: group.key)
        }

        /// Remembers `chunk` as its group's open chunk, unless a later hour's is remembered.
        mutating func remember(_ chunk: OpenChunk) {
            guard (openChunks[chunk.key]?.hour ?? .min) <= chunk.hour else { return }
            openChunks[chunk.key] = chunk
        }

        /// Forgets the open chunk of `group`.
        mutating func forgetOpenChunk(of group: SeriesGroup) {
            if openChunks[group.key]?.hour == group.hour { openChunks[group.key] = nil }
        }

        /// A start no stored sample of `group` comes after, if known.
        func latestStart(of group: SeriesGroup) -> Int64? {
            latestStarts[group.key].flatMap { $0.hour == group.hour ? $0.start : nil }
        }

        /// Notes that a sample of `group` starting at `start` is stored (or that none after
        /// `start` is), unless a later hour of the key is remembered.
        mutating func noteStored(_ start: Int64, in group: SeriesGroup) {
            let known = latestStarts[group.key]
            guard (known?.hour ?? .min) <= group.hour else { return }
            latestStarts[group.key] = (group.hour, known?.hour == group.hour ? max(known?.start ?? start, start) : start)
        }
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

    /// How many open chunks and latest starts are remembered (for tests).
    var rememberedCounts: (openChunks: Int, latestStarts: Int) {
        contents.withLock { ($0?.openChunkCount ?? 0, $0?.latestStartCount ?? 0) }
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
/// row and the encoders of its blobs, which hold its samples and carry each flush's new ones
/// on. The samples are kept there only (a live daemon holds one open chunk per strap and
/// type, up to `SeriesBlobs.maximumCount` samples each).
struct OpenChunk: Sendable {
    let id: Int64
    let key: SeriesKey
    let hour: Int64
    let shape: ChunkShape
    private(set) var summary: SeriesSummary
    let tick: Int64
    private var firstAnchor: Int64
    private var lastAnchor: Int64
    /// The starts (in ticks) and values.
    private var pointsEncoder = QuantitySeriesEncoder()
    /// The anchors and gap flags.
    private var anchorsEncoder = HeartbeatSeriesEncoder()

    /// The chunk of row `id` of `group` holding `points` (at least one).
    init(id: Int64, of group: SeriesGroup, shape: ChunkShape, points: SeriesPoints) {
        self.id = id
        key = group.key
        hour = group.hour
        self.shape = shape
        summary = points.summary
        tick = SeriesBlobs.tick(for: points.starts)
        firstAnchor = points.anchors.min() ?? 0
        lastAnchor = points.anchors.max() ?? 0
        pointsEncoder.reserveCapacity(points.count)
        anchorsEncoder.reserveCapacity(points.count)
        for index in 0..<points.count {
            pointsEncoder.append(time: points.starts[index] / tick, value: points.values[index])
            anchorsEncoder.append(offset: points.anchors[index], precededByGap: points.precededByGap[index])
        }
    }

    /// How many samples it holds (at least one).
    var count: Int { pointsEncoder.count }

    /// Its first sample's start and gap flag.
    var first: (start: Int64, precededByGap: Bool) { (pointsEncoder.times[0] * tick, anchorsEncoder.precededByGap[0]) }

    /// Its last sample's start and value.
    var last: (start: Int64, value: Double) { (pointsEncoder.times[count - 1] * tick, pointsEncoder.values[count - 1]) }

    /// Its samples.
    var points: SeriesPoints {
        var points = SeriesPoints()
        points.starts = pointsEncoder.times.map { $0 * tick }
        points.values = pointsEncoder.values
        points.anchors = anchorsEncoder.offsets
        points.precededByGap = anchorsEncoder.precededByGap
        return points
    }

    /// Whether samples of `shape` starting at `starts` (in increasing order) can be added
    /// after the others: the chunk has that shape and room for them, and they start after
    /// its samples, in whole numbers of its ticks.
    func takes(_ starts: some Collection<Int64>, shape: ChunkShape) -> Bool {
        guard shape == self.shape, count + starts.count <= SeriesBlobs.maximumCount, let first = starts.first else { return false }
        return first > last.start && starts.allSatisfy { $0 % tick == 0 }
    }

    /// Adds a sample after the others (`takes` says it may be).
    mutating func append(start: Int64, value: Double, anchor: Int64, precededByGap: Bool) {
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
            count: count, first: first.start, last: last.start, summary: summary,
            anchors: firstAnchor...lastAnchor, tick: tick, points: pointsEncoder.encodedAppending(),
            anchorsBlob: anchorsEncoder.encodedAppending())
    }
}
