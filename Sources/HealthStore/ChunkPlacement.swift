import HealthModel
import GRDB

/// Puts the samples a save accepted into chunks. Per key and UTC hour, runs of one shape go
/// into the hour's open chunk when it has that shape (merged in start order and rewritten
/// whole: a chunk is small, and rewriting it at each flush is what keeps a live strap's
/// latest samples on disk), the rest into new chunks, each closed where `ChunkBudget` says.
///
/// A run that only adds after the open chunk the last save left (`WriteCache`) is added to
/// it without reading it back, its blobs carried on by its encoders: a live stream's flush
/// costs about its new samples and one row update per key.
struct ChunkPlacement {
    private struct Accepted {
        var start: Int64
        var value: Double
        var anchor: Int64
        /// Its shape's index in `shapes`.
        var shape: Int
    }

    /// The samples of each group, in the order groups were first given samples (so writes
    /// are repeatable).
    private var groups: [(group: SeriesGroup, samples: [Accepted])] = []
    private var groupIndex: [SeriesGroup: Int] = [:]
    /// The shapes seen, each once: samples refer to them by index.
    private var shapes: [ChunkShape] = []

    var isEmpty: Bool { groups.isEmpty }

    /// Adds a sample that was given `anchor`.
    mutating func add(_ key: SeriesKey, shape: ChunkShape, start: Int64, value: Double, anchor: Int64) {
        let group = SeriesGroup(key, start: start)
        let shapeIndex = shapes.last == shape ? shapes.count - 1 : (shapes.firstIndex(of: shape) ?? append(shape))
        let sample = Accepted(start: start, value: value, anchor: anchor, shape: shapeIndex)
        if let last = groups.indices.last, groups[last].group == group {
            groups[last].samples.append(sample)
        } else if let index = groupIndex[group] {
            groups[index].samples.append(sample)
        } else {
            groupIndex[group] = groups.count
            groups.append((group, [sample]))
        }
    }

    private mutating func append(_ shape: ChunkShape) -> Int {
        shapes.append(shape)
        return shapes.count - 1
    }

    /// Writes every sample added, keeping `cache`'s open chunks in step.
    func write(_ cache: inout WriteCache.Contents, _ db: Database) throws {
        let budget = ChunkBudget(pageSize: cache.pageSize)
        for (group, var samples) in groups {
            samples.sort { $0.start < $1.start }
            var runStart = 0
            for index in samples.indices where index == samples.count - 1 || samples[index + 1].shape != samples[runStart].shape {
                try place(samples[runStart...index], in: group, budget: budget, &cache, db)
                runStart = index + 1
            }
        }
    }

    /// The open chunk a run extends, as it was before.
    private struct Extended {
        var id: Int64
        /// Its first sample's start and gap flag as stored.
        var firstStart: Int64
        var firstGap: Bool
        /// How many samples it held when the run only adds after them (they are then the
        /// merged points' first), else 0.
        var unchangedPrefix: Int
    }

    /// Writes one run of samples of one shape, in start order.
    private func place(_ run: ArraySlice<Accepted>, in group: SeriesGroup, budget: ChunkBudget, _ cache: inout WriteCache.Contents, _ db: Database) throws {
        let shape = shapes[run[run.startIndex].shape]
        // Taken out of the cache before it grows, so that its arrays grow in place.
        if shape.sync == nil, cache.openChunk(of: group)?.takes(run.lazy.map { $0.start }, shape: shape) == true,
           var open = cache.takeOpenChunk(of: group)
        {
            let extended = Extended(id: open.id, firstStart: open.first.start, firstGap: open.first.precededByGap, unchangedPrefix: open.count)
            for sample in run {
                let gap = shape.span == .beat && !ChunkShape.Span.adjacentBeats(open.last, (sample.start, sample.value))
                open.append(start: sample.start, value: sample.value, anchor: sample.anchor, precededByGap: gap)
            }
            let chunk = open.encoded()
            if budget.admits(cellBytes: SeriesTable.cellBytes(key: group.key, shape: shape, chunk: chunk, rowID: open.id)) {
                try SeriesTable.rewriteAppended(open.id, chunk: chunk, db)
                cache.remember(open)
            } else {
                try write(open.points, of: shape, in: group, extending: extended, after: nil, budget: budget, &cache, db)
            }
            return
        }
        var points = SeriesPoints()
        points.reserveCapacity(run.count)
        for sample in run { points.append(start: sample.start, value: sample.value, anchor: sample.anchor, precededByGap: false) }
        let openRow = shape.sync == nil ? try SeriesLookup.openChunk(of: group.key, hour: group.hour, db) : nil
        var extended: Extended?
        if let openRow, openRow.shape == shape, openRow.summary.count < SeriesBlobs.maximumCount {
            let stored = try openRow.points()
            let appends = points.starts[0] > stored.starts[stored.count - 1]
            extended = Extended(
                id: openRow.id, firstStart: stored.starts[0], firstGap: stored.precededByGap[0], unchangedPrefix: appends ? stored.count : 0)
            points = Self.merge(stored, points)
        }
        if shape.span == .beat { try Self.markGaps(&points, key: group.key, keeping: extended, db) }
        try write(points, of: shape, in: group, extending: extended, after: openRow?.start ?? .min, budget: budget, &cache, db)
    }

    /// Writes `points` (in start order, gap flags set): into the chunk being `extended` as far
    /// as its budget goes, the rest into new chunks. Remembers the last chunk written as the
    /// group's open chunk when it is: when the points only added after the extended chunk, or
    /// extend none and start after `openStart`, the start of the group's open chunk before
    /// (`Int64.min` when it has none, nil when not known); else forgets the group's.
    private func write(
        _ points: SeriesPoints, of shape: ChunkShape, in group: SeriesGroup, extending extended: Extended?, after openStart: Int64?,
        budget: ChunkBudget, _ cache: inout WriteCache.Contents, _ db: Database
    ) throws {
        var last: (id: Int64, range: Range<Int>)?
        var sliceStart = 0
        while sliceStart < points.count {
            let rowID = sliceStart == 0 ? extended?.id : nil
            let chunk = budget.longestChunk(of: points, from: sliceStart) { chunk in
                SeriesTable.cellBytes(key: group.key, shape: shape, chunk: chunk, rowID: rowID)
            }
            if let rowID {
                // The open chunk takes no new sample when it is full to its budget: it is left as it is.
                if chunk.count != extended?.unchangedPrefix { try SeriesTable.rewrite(rowID, chunk: chunk, db) }
                last = (rowID, 0..<chunk.count)
            } else {
                last = (try SeriesTable.insert(key: group.key, shape: shape, chunk: chunk, db), sliceStart..<sliceStart + chunk.count)
            }
            sliceStart += chunk.count
        }
        guard shape.sync == nil else { return }  // a chunk of its own, never the open one
        let appended = (extended?.unchangedPrefix ?? 0) > 0
        let startsAfter = extended == nil && openStart.map { points.starts[0] > $0 } == true
        if let last, appended || startsAfter {
            cache.remember(OpenChunk(id: last.id, of: group, shape: shape, points: points.selecting(last.range)))
        } else {
            cache.forgetOpenChunk(of: group)
        }
    }

    /// Sets the gap flags of heartbeat samples: a beat is preceded by a gap when the interval
    /// before it does not end where its own starts (`BeatInterval.follows`). The first beat is
    /// compared with the last beat stored before it, unless it is the unchanged first beat of
    /// the open chunk being extended (`keeping`), whose flag stays.
    private static func markGaps(_ points: inout SeriesPoints, key: SeriesKey, keeping: Extended?, _ db: Database) throws {
        for index in points.starts.indices.dropFirst() {
            points.precededByGap[index] = !ChunkShape.Span.adjacentBeats(
                (points.starts[index - 1], points.values[index - 1]), (points.starts[index], points.values[index]))
        }
        let first = (points.starts[0], points.values[0])
        if let keeping, keeping.firstStart == first.0 {
            points.precededByGap[0] = keeping.firstGap
        } else if let previous = try lastBeat(of: key, before: first.0, db) {
            points.precededByGap[0] = !ChunkShape.Span.adjacentBeats(previous, first)
        } else {
            points.precededByGap[0] = true
        }
    }

    /// The last beat of `key` stored before `time`.
    private static func lastBeat(of key: SeriesKey, before time: Int64, _ db: Database) throws -> (start: Int64, value: Double)? {
        guard let row = try SeriesLookup.chunk(of: key, startingBefore: time, db), row.shape.span == .beat else { return nil }
        let points = try row.points()
        let index = points.firstIndex(startingAtOrAfter: time) - 1
        return index >= 0 ? (points.starts[index], points.values[index]) : nil
    }

    /// The points of `a` and `b` (each in start order) in start order.
    private static func merge(_ a: SeriesPoints, _ b: SeriesPoints) -> SeriesPoints {
        if let lastA = a.starts.last, let firstB = b.starts.first, lastA < firstB {
            var merged = a
            merged.starts += b.starts
            merged.values += b.values
            merged.anchors += b.anchors
            merged.precededByGap += b.precededByGap
            return merged
        }
        var merged = SeriesPoints()
        merged.reserveCapacity(a.count + b.count)
        var (i, j) = (0, 0)
        while i < a.count || j < b.count {
            if j == b.count || (i < a.count && a.starts[i] <= b.starts[j]) {
                merged.append(start: a.starts[i], value: a.values[i], anchor: a.anchors[i], precededByGap: a.precededByGap[i])
                i += 1
            } else {
                merged.append(start: b.starts[j], value: b.values[j], anchor: b.anchors[j], precededByGap: b.precededByGap[j])
                j += 1
            }
        }
        return merged
    }
}
