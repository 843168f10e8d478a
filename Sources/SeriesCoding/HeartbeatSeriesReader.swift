/// Reads the beats of a heartbeat series chunk (`SeriesFormat`, kind `H`) in order, without
/// allocating per beat. The header (gap list included) is checked when the reader is made;
/// each beat's bits when it is read; the end when `next()` first returns nil. After a throw the
/// reader must not be used again.
public struct HeartbeatSeriesReader: Sendable {
    /// The beats the chunk declares.
    public var count: Int { progress.count }
    /// The beats handed out so far.
    public var index: Int { progress.handedOut }

    private var progress: ChunkProgress

    private var reader: BitReader
    private var ticks: TickColumnReader
    private var gaps: Gaps

    private enum Gaps: Sendable {
        /// One flag bit per beat; `first` is beat 0's.
        case flagEachBeat(first: Bool)
        /// A list of gap indices, read as the beats come: `upcoming` is the next gap's index
        /// (`count` when none is left), `cursor` reads the `remaining` ones after it.
        case list(cursor: BitReader, remaining: Int, upcoming: Int)
    }

    /// Checks the version, kind and header of `chunk`.
    public init(_ chunk: some Collection<UInt8>) throws(SeriesCodingError) {
        try self.init(bytes: Array(chunk))
    }

    private init(bytes: [UInt8]) throws(SeriesCodingError) {
        let count: Int, version: UInt8
        (reader, count, version) = try SeriesFormat.readPrologue(bytes, kind: .heartbeat)
        progress = ChunkProgress(count: count)
        guard count > 0 else {
            (ticks, gaps) = (TickColumnReader(first: 0), .list(cursor: reader, remaining: 0, upcoming: 0))
            return
        }
        if try reader.readBit() {
            gaps = .flagEachBeat(first: try reader.readBit())
        } else {
            let gapCount = try reader.readVarint()
            // Walk the list once to check it and to reach the offsets; `cursor` reads it again
            // as the beats come.
            var cursor = reader
            var last = -1
            for _ in 0..<gapCount {
                last = try Self.nextGap(after: last, from: &reader, count: count)
            }
            // Each gap took a byte at least: the count fits in an Int.
            var (upcoming, remaining) = (count, Int(gapCount))
            if remaining > 0 {
                upcoming = try Self.nextGap(after: -1, from: &cursor, count: count)
                remaining -= 1
            }
            gaps = .list(cursor: cursor, remaining: remaining, upcoming: upcoming)
        }
        let first = try reader.readSignedVarint()
        ticks = count > 1 ? try TickColumnReader(first: first, readingCodeFrom: &reader, version: version) : TickColumnReader(first: first)
    }

    /// The index of the gap after the one at `last`, from the list; it must name a beat.
    private static func nextGap(after last: Int, from cursor: inout BitReader, count: Int) throws(SeriesCodingError) -> Int {
        let delta = try cursor.readVarint()
        guard delta < UInt64(count - 1 - last) else { throw .corruptHeader(.gapList) }
        return last + 1 + Int(delta)
    }

    /// The next beat; nil after the last, once the bytes are found to end there.
    public mutating func next() throws(SeriesCodingError) -> Heartbeat? {
        guard try progress.hasPoint(in: &reader) else { return nil }
        defer { progress.handedOut += 1 }
        let precededByGap: Bool
        switch gaps {
        case .flagEachBeat(let first):
            precededByGap = index == 0 ? first : try reader.readBit()
        case .list(var cursor, let remaining, let upcoming):
            precededByGap = index == upcoming
            if precededByGap {
                let following = remaining > 0 ? try Self.nextGap(after: upcoming, from: &cursor, count: count) : count
                gaps = .list(cursor: cursor, remaining: max(remaining - 1, 0), upcoming: following)
            }
        }
        let offset = index == 0 ? ticks.last : try ticks.next(from: &reader)
        return Heartbeat(offset: offset, precededByGap: precededByGap)
    }

    /// All beats of `chunk`.
    public static func decode(_ chunk: some Collection<UInt8>) throws(SeriesCodingError) -> [Heartbeat] {
        var reader = try HeartbeatSeriesReader(chunk)
        return try SeriesFormat.collect(count: reader.count) { () throws(SeriesCodingError) in try reader.next() }
    }
}
