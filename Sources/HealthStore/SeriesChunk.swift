import HealthModel
import Foundation
import SeriesCoding

/// Whose samples a chunk holds: one type from one source and one device (HealthKit's series
/// sample belongs to one source and device too). Identity is (key, start).
struct SeriesKey: Hashable {
    var typeID: Int
    var sourceID: Int64
    var deviceID: Int64?
}

/// What every sample of a chunk shares besides its key, so that it is stored once per chunk
/// and not per sample: how a sample's end follows from its start, its metadata, and its sync
/// stamp. A sample of another shape starts another chunk.
struct ChunkShape: Hashable {
    /// How a sample's end follows from its start.
    enum Span: Hashable {
        /// Every sample lasts this many microseconds (0 for an instant such as a heart rate).
        case fixed(Int64)
        /// A heartbeat series: each sample is the interval (its value, in milliseconds) that
        /// ends at a beat, HKHeartbeatSeriesSample's way; the end is the start plus the value.
        case beat

        /// The end of a sample that starts at `start` with `value`.
        @inline(__always)
        func end(start: Int64, value: Double) -> Int64 {
            switch self {
            case .fixed(let duration): start &+ duration
            case .beat: start &+ Self.beatMicroseconds(value)
            }
        }

        /// A beat interval of `milliseconds` in microseconds, rounded as the ingest pipeline
        /// places beats.
        static func beatMicroseconds(_ milliseconds: Double) -> Int64 { BeatInterval.microseconds(milliseconds) }

        /// Whether beat `later` (start, milliseconds) follows beat `earlier` with nothing
        /// missed between them.
        static func adjacentBeats(_ earlier: (start: Int64, value: Double), _ later: (start: Int64, value: Double)) -> Bool {
            BeatInterval.follows(
                earlierEnd: earlier.start &+ beatMicroseconds(earlier.value), earlierMilliseconds: earlier.value,
                laterStart: later.start, laterMilliseconds: later.value)
        }

        /// The span that reproduces `end` for a sample of `type`.
        init(type: SampleType, start: Int64, end: Int64, value: Double) {
            if type == .rrInterval, end &- start == Self.beatMicroseconds(value) {
                self = .beat
            } else {
                self = .fixed(end &- start)
            }
        }
    }

    /// A sync identifier and version: a chunk with one holds exactly one sample, so that a
    /// higher version replaces that sample alone.
    struct SyncStamp: Hashable {
        var identifier: String
        var version: Int
    }

    var span: Span
    var sensorLocation: HeartRateSensorLocation?
    var sensorContact: Bool?
    /// The free-form metadata keys as JSON with sorted keys, nil when there are none.
    var extra: String?
    var sync: SyncStamp?

    init(span: Span, sensorLocation: HeartRateSensorLocation?, sensorContact: Bool?, extra: String?, sync: SyncStamp?) {
        self.span = span
        self.sensorLocation = sensorLocation
        self.sensorContact = sensorContact
        self.extra = extra
        self.sync = sync
    }

    /// The shape of `sample`, whose value in the canonical unit is `value` and whose
    /// free-form metadata `encoder` turns into JSON.
    init(_ sample: QuantitySample, value: Double, encoder: JSONEncoder) throws {
        let metadata = sample.metadata
        span = Span(
            type: sample.type, start: sample.start.microsecondsSinceEpoch, end: sample.end.microsecondsSinceEpoch,
            value: value)
        sensorLocation = metadata.sensorLocation
        sensorContact = metadata.sensorContact
        extra = metadata.extra.isEmpty ? nil : String(decoding: try encoder.encode(metadata.extra), as: UTF8.self)
        sync = metadata.syncIdentifier.map { SyncStamp(identifier: $0, version: metadata.syncVersion ?? 0) }
    }

    /// The metadata every sample of the chunk carries.
    func metadata() -> SampleMetadata {
        var extraKeys: [String: String] = [:]
        if let extra { extraKeys = (try? JSONDecoder().decode([String: String].self, from: Data(extra.utf8))) ?? [:] }
        return SampleMetadata(
            sensorLocation: sensorLocation, sensorContact: sensorContact,
            syncIdentifier: sync?.identifier, syncVersion: sync?.version, extra: extraKeys)
    }
}

/// The samples of one chunk in memory, in start order, as parallel columns: what a row of
/// table `series` holds once decoded, and what is encoded back into it.
struct SeriesPoints {
    /// Microseconds since the epoch, ascending, no two equal.
    var starts: [Int64] = []
    /// In the type's canonical unit.
    var values: [Double] = []
    /// Each sample's anchor: its id, the place in the change sequence where it was added.
    var anchors: [Int64] = []
    /// Heartbeat series: whether the beat is preceded by a gap (the interval before it does
    /// not end where this one starts). Always false for other series.
    var precededByGap: [Bool] = []

    var count: Int { starts.count }
    var isEmpty: Bool { starts.isEmpty }

    mutating func append(start: Int64, value: Double, anchor: Int64, precededByGap gap: Bool) {
        starts.append(start)
        values.append(value)
        anchors.append(anchor)
        precededByGap.append(gap)
    }

    mutating func reserveCapacity(_ capacity: Int) {
        starts.reserveCapacity(capacity)
        values.reserveCapacity(capacity)
        anchors.reserveCapacity(capacity)
        precededByGap.reserveCapacity(capacity)
    }

    /// The points at `indices`, in order.
    func selecting(_ indices: some Sequence<Int>) -> SeriesPoints {
        var kept = SeriesPoints()
        for index in indices {
            kept.append(start: starts[index], value: values[index], anchor: anchors[index], precededByGap: precededByGap[index])
        }
        return kept
    }

    /// The index of the first point starting at or after `time`.
    func firstIndex(startingAtOrAfter time: Int64) -> Int {
        var low = 0, high = starts.count
        while low < high {
            let middle = (low + high) / 2
            if starts[middle] < time { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// Whether a point starts exactly at `time`.
    func contains(start time: Int64) -> Bool {
        let index = firstIndex(startingAtOrAfter: time)
        return index < starts.count && starts[index] == time
    }

    /// Count, minimum, maximum and sum of the values.
    var summary: SeriesSummary {
        var summary = SeriesSummary()
        for value in values { summary.add(value) }
        return summary
    }
}

/// Count, minimum, maximum and sum of some values: what a chunk row carries for statistics.
struct SeriesSummary {
    var count = 0
    var minimum = Double.infinity
    var maximum = -Double.infinity
    var sum = 0.0

    @inline(__always)
    mutating func add(_ value: Double) {
        count += 1
        minimum = min(minimum, value)
        maximum = max(maximum, value)
        sum += value
    }

    mutating func add(_ other: SeriesSummary) {
        count += other.count
        minimum = min(minimum, other.minimum)
        maximum = max(maximum, other.maximum)
        sum += other.sum
    }
}

/// How a chunk's columns become the `points` and `anchors` blobs (`SeriesFormat` version 1)
/// and back.
enum SeriesBlobs {
    /// The most samples one chunk holds; most chunks close before, when their row fills a
    /// quarter of a page (`ChunkBudget`).
    static let maximumCount = 512
    /// A chunk never spans two UTC hours: a sample's chunk is found from its hour, and
    /// statistics by the hour or the day take a chunk's summary whole.
    static let hour: Int64 = UTCHour.microseconds

    /// The UTC hour a time falls in (rounded down, also before 1970).
    @inline(__always)
    static func hour(of time: Int64) -> Int64 { UTCHour.of(time) }

    /// The coarsest tick (1 s, 1 ms or 1 µs) that every start is a whole number of.
    static func tick(for starts: [Int64]) -> Int64 {
        for tick: Int64 in [1_000_000, 1000] where starts.allSatisfy({ $0 % tick == 0 }) { return tick }
        return 1
    }

    /// The `points` blob: each sample's start (in `tick`s) and value.
    static func encodePoints(_ points: SeriesPoints, tick: Int64) -> [UInt8] {
        var encoder = QuantitySeriesEncoder()
        encoder.reserveCapacity(points.count)
        for index in 0..<points.count { encoder.append(time: points.starts[index] / tick, value: points.values[index]) }
        return encoder.encoded()
    }

    /// The `anchors` blob: each sample's anchor, with the heartbeat gap flags.
    static func encodeAnchors(_ points: SeriesPoints) -> [UInt8] {
        var encoder = HeartbeatSeriesEncoder()
        encoder.reserveCapacity(points.count)
        for index in 0..<points.count { encoder.append(offset: points.anchors[index], precededByGap: points.precededByGap[index]) }
        return encoder.encoded()
    }

    /// The samples of a chunk row, checked against the count the row declares.
    static func decode(points: [UInt8], anchors: [UInt8], tick: Int64, count: Int, into decoded: inout SeriesPoints) throws(SeriesBlobError) {
        decoded.starts.removeAll(keepingCapacity: true)
        decoded.values.removeAll(keepingCapacity: true)
        decoded.anchors.removeAll(keepingCapacity: true)
        decoded.precededByGap.removeAll(keepingCapacity: true)
        do {
            try QuantitySeriesReader.decode(points, appendingTimesTo: &decoded.starts, values: &decoded.values)
            var beats = try HeartbeatSeriesReader(anchors)
            decoded.anchors.reserveCapacity(beats.count)
            decoded.precededByGap.reserveCapacity(beats.count)
            while let beat = try beats.next() {
                decoded.anchors.append(beat.offset)
                decoded.precededByGap.append(beat.precededByGap)
            }
        } catch {
            throw .undecodable(error)
        }
        guard decoded.starts.count == count, decoded.anchors.count == count else {
            throw .countMismatch(declared: count, points: decoded.starts.count, anchors: decoded.anchors.count)
        }
        if tick != 1 {
            for index in decoded.starts.indices { decoded.starts[index] = decoded.starts[index] &* tick }
        }
    }
}

/// Why a chunk row could not be read back.
enum SeriesBlobError: Error, CustomStringConvertible {
    case undecodable(SeriesCodingError)
    case countMismatch(declared: Int, points: Int, anchors: Int)

    var description: String {
        switch self {
        case .undecodable(let error): "\(error)"
        case .countMismatch(let declared, let points, let anchors):
            "declares \(declared) samples but holds \(points) points and \(anchors) anchors"
        }
    }
}
