/// Reads the points of a quantity series chunk (`SeriesFormat`, kind `Q`) in order, without
/// allocating per point. The header is checked when the reader is made; each point's bits when
/// it is read; the end (nothing after the last point but zero padding) when `next()` first
/// returns nil. After a throw the reader must not be used again.
public struct QuantitySeriesReader: Sendable {
    /// The points the chunk declares.
    public var count: Int { progress.count }
    /// The points handed out so far.
    public var index: Int { progress.handedOut }

    private var progress: ChunkProgress

    private var reader: BitReader
    private var ticks: TickColumnReader
    private var values: Values
    private let firstValue: Double

    fileprivate enum Values: Sendable {
        case scaled(ScaledIntegerReader)
        case xor(FloatXORReader)
        /// Fewer than two points: no value follows the first.
        case firstOnly
    }

    /// Checks the version, kind and header of `chunk`.
    public init(_ chunk: some Collection<UInt8>) throws(SeriesCodingError) {
        try self.init(bytes: Array(chunk))
    }

    private init(bytes: [UInt8]) throws(SeriesCodingError) {
        let count: Int, version: UInt8
        (reader, count, version) = try SeriesFormat.readPrologue(bytes, kind: .quantity)
        progress = ChunkProgress(count: count)
        guard count > 0 else {
            (ticks, values, firstValue) = (TickColumnReader(first: 0), .firstOnly, 0)
            return
        }
        let isXOR = try reader.readBit()
        let firstTime = try reader.readSignedVarint()
        if isXOR {
            firstValue = Double(bitPattern: try reader.read(64))
            values = count > 1 ? .xor(FloatXORReader(first: firstValue)) : .firstOnly
            ticks = count > 1 ? try TickColumnReader(first: firstTime, readingCodeFrom: &reader, version: version) : TickColumnReader(first: firstTime)
        } else {
            let (scale, firstInteger) = try ScaledIntegerReader.readFirst(from: &reader)
            firstValue = scale.value(of: firstInteger)
            guard count > 1 else {
                (ticks, values) = (TickColumnReader(first: firstTime), .firstOnly)
                return
            }
            ticks = try TickColumnReader(first: firstTime, readingCodeFrom: &reader, version: version)
            values = .scaled(try ScaledIntegerReader(scale: scale, first: firstInteger, readingCodeFrom: &reader))
        }
    }

    /// The next point; nil after the last, once the bytes are found to end there.
    public mutating func next() throws(SeriesCodingError) -> QuantitySeriesPoint? {
        guard try progress.hasPoint(in: &reader) else { return nil }
        defer { progress.handedOut += 1 }
        guard index > 0 else { return QuantitySeriesPoint(time: ticks.last, value: firstValue) }
        let time = try ticks.next(from: &reader)
        switch values {
        case .scaled(var scaled):
            let value = try scaled.next(from: &reader)
            values = .scaled(scaled)
            return QuantitySeriesPoint(time: time, value: value)
        case .xor(var xor):
            let value = try xor.next(from: &reader, index: index)
            values = .xor(xor)
            return QuantitySeriesPoint(time: time, value: value)
        case .firstOnly:
            return QuantitySeriesPoint(time: time, value: firstValue)
        }
    }

    /// All points of `chunk`.
    public static func decode(_ chunk: some Collection<UInt8>) throws(SeriesCodingError) -> [QuantitySeriesPoint] {
        var reader = try QuantitySeriesReader(chunk)
        return try SeriesFormat.collect(count: reader.count) { () throws(SeriesCodingError) in try reader.next() }
    }

    /// Appends the times and values of `chunk` to the arrays given: with arrays kept from one
    /// chunk to the next (`removeAll(keepingCapacity: true)`), decoding allocates nothing.
    /// On a throw, the arrays may hold some of the points.
    public static func decode(
        _ chunk: some Collection<UInt8>, appendingTimesTo times: inout [Int64], values: inout [Double]
    ) throws(SeriesCodingError) {
        var reader = try QuantitySeriesReader(chunk)
        times.reserveCapacity(times.count + reader.count)
        values.reserveCapacity(values.count + reader.count)
        switch reader.values {
        case .scaled(let scaled): try reader.readRest(with: scaled, appendingTimesTo: &times, values: &values)
        case .xor(let xor): try reader.readRest(with: xor, appendingTimesTo: &times, values: &values)
        case .firstOnly: break
        }
        while let point = try reader.next() {
            times.append(point.time)
            values.append(point.value)
        }
    }

    /// Reads every point but the last through `column`, in one loop specialised for it: the
    /// fast path of bulk decoding. `next()` hands out the last point and checks the end.
    private mutating func readRest(
        with column: some ValueColumnReader, appendingTimesTo times: inout [Int64], values: inout [Double]
    ) throws(SeriesCodingError) {
        guard index == 0, count > 1 else { return }
        times.append(ticks.last)
        values.append(firstValue)
        // Locals, not properties of self, so that the optimiser keeps the state in registers.
        var bits = reader, ticks = ticks, valueColumn = column
        for point in 1..<count - 1 {
            times.append(try ticks.next(from: &bits))
            values.append(try valueColumn.next(from: &bits, index: point))
        }
        (reader, self.ticks, progress.handedOut, self.values) = (bits, ticks, count - 1, valueColumn.wrapped)
    }
}

/// A value column read point by point, for the specialised bulk loop.
private protocol ValueColumnReader {
    mutating func next(from reader: inout BitReader, index: Int) throws(SeriesCodingError) -> Double
    /// The column as the reader's `values` state.
    var wrapped: QuantitySeriesReader.Values { get }
}

extension ScaledIntegerReader: ValueColumnReader {
    @inline(__always)
    fileprivate mutating func next(from reader: inout BitReader, index: Int) throws(SeriesCodingError) -> Double {
        try next(from: &reader)
    }

    fileprivate var wrapped: QuantitySeriesReader.Values { .scaled(self) }
}

extension FloatXORReader: ValueColumnReader {
    fileprivate var wrapped: QuantitySeriesReader.Values { .xor(self) }
}
