/// One beat of a heartbeat series, HealthKit's way (`HKHeartbeatSeriesBuilder`): its time as
/// an offset from the start of the series in the caller's ticks (1/1024 s for the RR intervals
/// of GATT and ANT+ straps, whose sums are then exact), and whether it is preceded by a gap
/// (beats were missed between the previous one and this one).
public struct Heartbeat: Hashable, Sendable {
    public var offset: Int64
    public var precededByGap: Bool

    public init(offset: Int64, precededByGap: Bool = false) {
        self.offset = offset
        self.precededByGap = precededByGap
    }
}

/// Builds a heartbeat series chunk (`SeriesFormat`, kind `H`) beat by beat: the offsets as a
/// tick column (delta of delta is the change of RR interval), the gap flags as a sparse list of
/// beat indices or one bit per beat, whichever is smaller. Like `QuantitySeriesEncoder`, it
/// keeps its beats and writes the chunk anew on each `encoded()`, or carries the chunk it
/// wrote last on with `encodedAppending()` (a new gap in a chunk that lists its gaps, which
/// changes the list before the offsets, makes it choose the codes anew).
public struct HeartbeatSeriesEncoder: Sendable {
    /// The beats' offsets, in the order appended.
    public private(set) var offsets: [Int64] = []
    /// The beats' gap flags, in the order appended.
    public private(set) var precededByGap: [Bool] = []
    /// The chunk `encodedAppending()` wrote last, to carry on.
    private var appending: CarriedChunk<HeartbeatColumns>?

    /// An empty series.
    public init() {}

    /// An encoder holding the beats of `chunk`, to append more.
    public init(resuming chunk: some Collection<UInt8>) throws(SeriesCodingError) {
        var reader = try HeartbeatSeriesReader(chunk)
        reserveCapacity(reader.count)
        while let beat = try reader.next() { append(beat) }
    }

    /// The beats appended so far.
    public var count: Int { offsets.count }
    public var isEmpty: Bool { offsets.isEmpty }

    /// The offset of the last beat; nil when empty.
    public var lastOffset: Int64? { offsets.last }

    /// How many beats there were when `encodedAppending()` last chose its codes; nil before.
    var plannedCount: Int? { appending?.plannedCount }

    /// Reserves room for `capacity` beats in all.
    public mutating func reserveCapacity(_ capacity: Int) {
        offsets.reserveCapacity(capacity)
        precededByGap.reserveCapacity(capacity)
    }

    /// Empties the encoder, keeping its storage for the next chunk.
    public mutating func removeAll() {
        offsets.removeAll(keepingCapacity: true)
        precededByGap.removeAll(keepingCapacity: true)
        appending = nil
    }

    /// Adds a beat after the others (offsets should grow, but any round-trip).
    public mutating func append(offset: Int64, precededByGap: Bool = false) {
        offsets.append(offset)
        self.precededByGap.append(precededByGap)
    }

    /// Adds a beat after the others.
    public mutating func append(_ beat: Heartbeat) {
        append(offset: beat.offset, precededByGap: beat.precededByGap)
    }

    /// The chunk of all beats appended so far, in the codes that make it smallest.
    public func encoded() -> [UInt8] {
        var body = BitWriter(capacity: 16 + 2 * offsets.count)
        _ = Self.write(offsets, precededByGap, to: &body)
        return SeriesFormat.chunk(of: .heartbeat, count: offsets.count, body: body)
    }

    /// The chunk of all beats appended so far, carried on from the one this method returned
    /// last when the new beats fit its codes (see `QuantitySeriesEncoder.encodedAppending()`).
    public mutating func encodedAppending() -> [UInt8] {
        let (offsets, precededByGap) = (offsets, precededByGap)
        return CarriedChunk.encoded(carrying: &appending, (offsets, precededByGap), count: offsets.count, kind: .heartbeat) { body in
            Self.write(offsets, precededByGap, to: &body)
        }
    }

    /// Writes the bits after the count, in the codes that make them smallest; returns the
    /// state after the last beat (nil for fewer than two).
    private static func write(_ offsets: [Int64], _ precededByGap: [Bool], to writer: inout BitWriter) -> HeartbeatColumns? {
        guard !offsets.isEmpty else { return nil }
        let ticks = TickColumnPlan(offsets)
        let gapIndices = precededByGap.indices.filter { precededByGap[$0] }
        let listDeltas = zip([-1] + gapIndices, gapIndices).map { UInt64($1 - $0 - 1) }
        let listBits = BitWriter.varintBitCount(UInt64(gapIndices.count)) + listDeltas.reduce(0) { $0 + BitWriter.varintBitCount($1) }
        let flagEachBeat = offsets.count < listBits
        writer.write(flagEachBeat)
        if flagEachBeat {
            writer.write(precededByGap[0])
        } else {
            writer.writeVarint(UInt64(gapIndices.count))
            for delta in listDeltas { writer.writeVarint(delta) }
        }
        ticks.writeFirst(to: &writer)
        ticks.writeCode(to: &writer)
        for index in offsets.indices.dropFirst() {
            if flagEachBeat { writer.write(precededByGap[index]) }
            ticks.writeResidual(ofPoint: index, to: &writer)
        }
        return offsets.count >= 2 ? HeartbeatColumns(ticks: TickAppender(ticks, ticks: offsets), flagEachBeat: flagEachBeat) : nil
    }
}

/// A heartbeat chunk's gap flags and offsets, carried on: a gap list is written before the
/// offsets, so a new gap does not fit it.
private struct HeartbeatColumns: CarriedColumns {
    var ticks: TickAppender
    /// Whether each beat has a flag bit (else the gaps are listed before the offsets).
    let flagEachBeat: Bool

    mutating func prepare(_ beats: (offsets: [Int64], precededByGap: [Bool]), at index: Int) -> UInt64? {
        guard flagEachBeat || !beats.precededByGap[index], let residual = ticks.residual(of: beats.offsets[index]) else { return nil }
        ticks.advance(to: beats.offsets[index], residual: residual)
        return residual
    }

    mutating func write(_ residual: UInt64, of beats: (offsets: [Int64], precededByGap: [Bool]), at index: Int, to writer: inout BitWriter) {
        if flagEachBeat { writer.write(beats.precededByGap[index]) }
        ticks.code.write(residual, to: &writer)
        ticks.advance(to: beats.offsets[index], residual: residual)
    }
}
