/// One point of a quantity series: a time in the caller's ticks and a value.
public struct QuantitySeriesPoint: Hashable, Sendable {
    public var time: Int64
    public var value: Double

    public init(time: Int64, value: Double) {
        self.time = time
        self.value = value
    }
}

/// Builds a quantity series chunk (`SeriesFormat`, kind `Q`) point by point.
///
/// The encoder keeps its points (16 bytes each) and writes the whole chunk on each
/// `encoded()`, choosing the value mode, scale, time predictor and residual codes for all of
/// them: the open chunk of a store grows at every flush and is rewritten each time (some
/// 40 µs for a thousand points), and a stored chunk is extended with `init(resuming:)`.
/// Any times (equal, backwards, far apart) and any doubles round-trip exactly.
public struct QuantitySeriesEncoder: Sendable {
    private var times: [Int64] = []
    private var values: [Double] = []

    /// An empty chunk.
    public init() {}

    /// An encoder holding the points of `chunk`, to append more.
    public init(resuming chunk: some Collection<UInt8>) throws(SeriesCodingError) {
        try QuantitySeriesReader.decode(chunk, appendingTimesTo: &times, values: &values)
    }

    /// The points appended so far.
    public var count: Int { times.count }
    public var isEmpty: Bool { times.isEmpty }

    /// The time of the first point; nil when empty.
    public var firstTime: Int64? { times.first }

    /// The time of the last point; nil when empty.
    public var lastTime: Int64? { times.last }

    /// Reserves room for `capacity` points in all.
    public mutating func reserveCapacity(_ capacity: Int) {
        times.reserveCapacity(capacity)
        values.reserveCapacity(capacity)
    }

    /// Adds a point after the others (its time may be anything, even earlier).
    public mutating func append(time: Int64, value: Double) {
        times.append(time)
        values.append(value)
    }

    /// Empties the encoder, keeping its storage for the next chunk.
    public mutating func removeAll() {
        times.removeAll(keepingCapacity: true)
        values.removeAll(keepingCapacity: true)
    }

    /// The chunk of all points appended so far.
    public func encoded() -> [UInt8] {
        var writer = SeriesFormat.writer(for: .quantity, capacity: 16 + 2 * times.count)
        writer.writeVarint(UInt64(times.count))
        guard let firstValue = values.first else { return writer.finished() }
        let ticks = TickColumnPlan(times)
        let scaled = ScaledIntegerPlan(values).flatMap { plan in
            plan.bitCount <= 64 + FloatXORState.bitCount(of: values.dropFirst(), after: firstValue) ? plan : nil
        }
        writer.write(scaled == nil)
        ticks.writeFirst(to: &writer)
        if let scaled { scaled.writeFirst(to: &writer) } else { writer.write(firstValue.bitPattern, width: 64) }
        ticks.writeCode(to: &writer)
        scaled?.writeCode(to: &writer)
        var xor = FloatXORWriter(first: firstValue)
        for index in times.indices.dropFirst() {
            ticks.writeResidual(ofPoint: index, to: &writer)
            if let scaled { scaled.writeValue(ofPoint: index, to: &writer) } else { xor.write(values[index], to: &writer) }
        }
        return writer.finished()
    }
}
