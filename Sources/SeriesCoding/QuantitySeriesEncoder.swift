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
/// The encoder keeps its points (16 bytes each). `encoded()` writes the whole chunk, choosing
/// the value mode, scale, time predictor and residual codes for all of them (some 40 µs for
/// a thousand points). `encodedAppending()` serves a chunk that grows a few points at a time,
/// as a live strap's open chunk does at every flush: it carries the chunk it wrote last on with
/// the codes chosen then, so each call costs about the new points (and a copy of the bytes),
/// and chooses them anew, writing every point again, only when a new point does not fit them
/// or the points have doubled since. Its chunks decode exactly as `encoded()`'s do and are a
/// little larger at most. Any times (equal, backwards, far apart) and any doubles round-trip
/// exactly; a stored chunk is extended with `init(resuming:)`.
public struct QuantitySeriesEncoder: Sendable {
    /// The points' times, in the order appended.
    public private(set) var times: [Int64] = []
    /// The points' values, in the order appended.
    public private(set) var values: [Double] = []
    /// The chunk `encodedAppending()` wrote last, to carry on.
    private var appending: CarriedChunk<QuantityColumns>?

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

    /// How many points there were when `encodedAppending()` last chose its codes; nil before.
    var plannedCount: Int? { appending?.plannedCount }

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
        appending = nil
    }

    /// The chunk of all points appended so far, in the codes that make it smallest.
    public func encoded() -> [UInt8] {
        var body = BitWriter(capacity: 16 + 2 * times.count)
        _ = Self.write(times, values, to: &body)
        return SeriesFormat.chunk(of: .quantity, count: times.count, body: body)
    }

    /// The chunk of all points appended so far, carried on from the one this method returned
    /// last when the new points fit its codes (see the type's description).
    public mutating func encodedAppending() -> [UInt8] {
        let (times, values) = (times, values)
        return CarriedChunk.encoded(carrying: &appending, (times, values), count: times.count, kind: .quantity) { body in
            Self.write(times, values, to: &body)
        }
    }

    /// Writes the bits after the count for `times` and `values`, in the codes that make them
    /// smallest; returns the codes' state after the last point (nil for fewer than two).
    private static func write(_ times: [Int64], _ values: [Double], to writer: inout BitWriter) -> QuantityColumns? {
        guard let firstValue = values.first else { return nil }
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
        guard times.count >= 2 else { return nil }
        let valueState: QuantityColumns.Values = scaled.map { .scaled(ScaledIntegerAppender($0, lastValue: values[values.count - 1])) } ?? .xor(xor)
        return QuantityColumns(ticks: TickAppender(ticks, ticks: times), values: valueState)
    }
}

/// A quantity chunk's time and value columns, carried on.
private struct QuantityColumns: CarriedColumns {
    /// How the values after the last go on.
    enum Values: Sendable {
        case scaled(ScaledIntegerAppender)
        case xor(FloatXORWriter)
    }

    var ticks: TickAppender
    var values: Values

    mutating func prepare(_ points: (times: [Int64], values: [Double]), at index: Int) -> (time: UInt64, value: UInt64, integer: Int64)? {
        guard let time = ticks.residual(of: points.times[index]) else { return nil }
        var bits = (time: time, value: UInt64(0), integer: Int64(0))
        if case .scaled(let scaled) = values {
            guard let value = scaled.residual(of: points.values[index]) else { return nil }
            (bits.value, bits.integer) = (value.residual, value.integer)
        }
        advance(past: bits, of: points, at: index)
        return bits
    }

    mutating func write(
        _ pending: (time: UInt64, value: UInt64, integer: Int64), of points: (times: [Int64], values: [Double]), at index: Int,
        to writer: inout BitWriter
    ) {
        ticks.code.write(pending.time, to: &writer)
        switch values {
        case .scaled(let scaled): scaled.code.write(pending.value, to: &writer)
        case .xor(var xor):
            xor.write(points.values[index], to: &writer)
            values = .xor(xor)
        }
        advance(past: pending, of: points, at: index)
    }

    private mutating func advance(past bits: (time: UInt64, value: UInt64, integer: Int64), of points: (times: [Int64], values: [Double]), at index: Int) {
        ticks.advance(to: points.times[index], residual: bits.time)
        if case .scaled(var scaled) = values {
            scaled.advance(to: bits.integer)
            values = .scaled(scaled)
        }
    }
}
