/// The columns of a chunk as `CarriedChunk` carries them on past their last point: each new
/// point's bits under the codes chosen before.
protocol CarriedColumns: Sendable {
    /// The encoder's points, as the columns read them.
    associatedtype Points
    /// One point's bits, worked out.
    associatedtype Pending

    /// Works out the bits of point `index` and moves past it; nil when the codes cannot hold
    /// it.
    mutating func prepare(_ points: Points, at index: Int) -> Pending?

    /// Writes the bits `prepare` worked out for point `index` and moves past it.
    mutating func write(_ pending: Pending, of points: Points, at index: Int, to writer: inout BitWriter)
}

/// A chunk of at least two points written with codes chosen for its first `plannedCount`,
/// and the state of those codes after its last point: what an encoder's
/// `encodedAppending()` carries on.
struct CarriedChunk<Columns: CarriedColumns>: Sendable {
    /// The bits after the count.
    private(set) var body: BitWriter
    /// How many points there were when the codes were chosen.
    let plannedCount: Int
    private var columns: Columns
    /// The points written.
    private var written: Int

    /// A chunk of `count` points whose bits after the count are `body`.
    init(body: BitWriter, count: Int, columns: Columns) {
        self.body = body
        self.columns = columns
        plannedCount = count
        written = count
    }

    /// Writes points `written ..< count` of `points` when the count has not doubled since the
    /// codes were chosen and every new point fits them; otherwise changes nothing and returns
    /// false (the codes are then to be chosen anew).
    mutating func carry(_ points: Columns.Points, to count: Int) -> Bool {
        guard count < 2 * plannedCount else { return false }
        var preparing = columns
        var pending: [Columns.Pending] = []
        pending.reserveCapacity(count - written)
        for index in written..<count {
            guard let bits = preparing.prepare(points, at: index) else { return false }
            pending.append(bits)
        }
        for (offset, bits) in pending.enumerated() { columns.write(bits, of: points, at: written + offset, to: &body) }
        written = count
        return true
    }
}

extension CarriedChunk {
    /// The chunk of kind `kind` of the first `count` of `points`: `chunk` carried on when it
    /// can be, else written anew by `writeAnew` (which writes the bits after the count and
    /// returns the columns' state after the last point, nil for fewer than two points); `chunk`
    /// is left to carry on next time.
    static func encoded(
        carrying chunk: inout CarriedChunk?, _ points: Columns.Points, count: Int, kind: SeriesFormat.Kind,
        writingAnew writeAnew: (inout BitWriter) -> Columns?
    ) -> [UInt8] {
        // Taken out, so that its bytes grow in place.
        if var carried = chunk.take(), carried.carry(points, to: count) {
            chunk = carried
            return SeriesFormat.chunk(of: kind, count: count, body: carried.body)
        }
        var body = BitWriter(capacity: 16 + 4 * count)
        chunk = writeAnew(&body).map { CarriedChunk(body: body, count: count, columns: $0) }
        return SeriesFormat.chunk(of: kind, count: count, body: body)
    }
}
