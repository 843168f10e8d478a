import Foundation
import HealthModel
import SeriesCoding

/// What the samples of one chunk share, besides the gateway and type: who wrote them, what
/// measured them, how each one's end follows from its start, and their metadata. Samples of
/// another key go to another chunk, as in the local store.
struct ChunkKey: Hashable, Sendable {
    var source: Int32
    var device: Int32?
    /// Microseconds each sample lasts, or nil for a beat interval (end = start + value ms).
    var duration: Int64?
    var sensorLocation: Int16?
    var sensorContact: Bool?
    /// The other metadata keys as JSON with sorted keys; nil when there are none.
    var metadata: String?

    init(source: Int32, device: Int32?, sample: QuantitySample) {
        self.source = source
        self.device = device
        let start = sample.start.microsecondsSinceEpoch
        let end = sample.end.microsecondsSinceEpoch
        let value = sample.canonicalValue
        duration = sample.type == .rrInterval && end &- start == BeatInterval.microseconds(value) ? nil : end &- start
        sensorLocation = sample.metadata.sensorLocation.map { Int16($0.rawValue) }
        sensorContact = sample.metadata.sensorContact
        metadata = Self.json(sample.metadata.extra)
    }

    static func json(_ extra: [String: String]) -> String? {
        guard !extra.isEmpty else { return nil }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(extra)).flatMap { String(decoding: $0, as: UTF8.self) }
    }
}

/// The newest chunk a gateway writes for one key: where the next samples may go.
struct OpenChunk: Sendable, Equatable {
    var id: Int64
    var firstStart: Int64
    var lastStart: Int64
    var count: Int
}

/// Samples of one key in anchor order, cut into what is appended to the open chunk and the
/// new chunks to insert. A chunk holds at most `capacity` samples, all in one UTC hour, with
/// starts strictly increasing: so a day's statistics read its chunks' summaries, and a chunk
/// is appended to without reading it.
struct ChunkRuns {
    struct Point: Sendable {
        var start: Int64
        var value: Double
        var anchor: Int64
        var beat: Int32?
    }

    /// Points to append to `open`, if any.
    var appended: [Point] = []
    /// Points of new chunks, one array per chunk.
    var created: [[Point]] = []

    static let hour: Int64 = UTCHour.microseconds

    static func hourOf(_ micros: Int64) -> Int64 { UTCHour.of(micros) }

    init(points: [Point], open: OpenChunk?, capacity: Int) {
        var current: (firstStart: Int64, lastStart: Int64, count: Int)? = open.map { ($0.firstStart, $0.lastStart, $0.count) }
        var appending = open != nil
        var run: [Point] = []
        for point in points {
            if let chunk = current, point.start > chunk.lastStart, chunk.count < capacity,
               Self.hourOf(point.start) == Self.hourOf(chunk.firstStart)
            {
                current = (chunk.firstStart, point.start, chunk.count + 1)
                if appending { appended.append(point) } else { run.append(point) }
                continue
            }
            if !appending, !run.isEmpty { created.append(run) }
            appending = false
            run = [point]
            current = (point.start, point.start, 1)
        }
        if !appending, !run.isEmpty { created.append(run) }
    }
}
