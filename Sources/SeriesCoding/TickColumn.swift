/// How a chunk predicts each time delta (see `SeriesFormat`).
enum TickPredictor: UInt64, Sendable {
    /// By the delta before it (the first by the reference delta): delta of delta.
    case previousDelta = 0
    /// By the chunk's reference (median) delta.
    case referenceDelta = 1
}

/// The times of a chunk planned for writing: the predictor and residual code that make them
/// smallest, and each point's zigzag-mapped residual. All arithmetic wraps in 64 bits, so any
/// `Int64` ticks round-trip.
struct TickColumnPlan {
    let first: Int64
    let predictor: TickPredictor
    let referenceDelta: Int64
    /// The code of the residuals; nil for fewer than two points.
    let code: ResidualCode?
    /// Residual `i` belongs to point `i + 1`.
    let residuals: [UInt64]

    init(_ ticks: [Int64]) {
        first = ticks.first ?? 0
        let deltas = zip(ticks, ticks.dropFirst()).map { UInt64(bitPattern: $1 &- $0) }
        guard !deltas.isEmpty else {
            (predictor, referenceDelta, code, residuals) = (.previousDelta, 0, nil, [])
            return
        }
        let reference = deltas.map { Int64(bitPattern: $0) }.sorted()[deltas.count / 2]
        referenceDelta = reference
        // Each predictor with its residuals, their code, and the bits both take (the code table
        // costs 7 bits a bucket, and 2 bits either way).
        let candidates = [TickPredictor.referenceDelta, .previousDelta].map { predictor in
            let residuals = Self.residuals(of: deltas, predictor: predictor, reference: UInt64(bitPattern: reference))
            var histogram = BitLengthHistogram()
            for residual in residuals { histogram.add(residual) }
            let (code, bits) = ResidualCode.cheapest(for: histogram, spendingBits: true)
            return (predictor: predictor, code: code, residuals: residuals, bits: bits + 7 * code.bucketCount)
        }
        let best = candidates[1].bits < candidates[0].bits ? candidates[1] : candidates[0]
        (predictor, code, residuals) = (best.predictor, best.code, best.residuals)
    }

    private static func residuals(of deltas: [UInt64], predictor: TickPredictor, reference: UInt64) -> [UInt64] {
        var prediction = reference
        return deltas.map { delta in
            defer { if predictor == .previousDelta { prediction = delta } }
            return ZigZag.encode(Int64(bitPattern: delta &- prediction))
        }
    }

    /// Writes the first tick (a zvarint).
    func writeFirst(to writer: inout BitWriter) {
        writer.writeSignedVarint(first)
    }

    /// Writes the predictor, the reference delta and the residual code (nothing for fewer
    /// than two points).
    func writeCode(to writer: inout BitWriter) {
        guard let code else { return }
        writer.write(predictor.rawValue, width: 1)
        writer.writeSignedVarint(referenceDelta)
        code.writeTable(to: &writer)
    }

    /// Writes the residual of point `index` (1 ..< count).
    func writeResidual(ofPoint index: Int, to writer: inout BitWriter) {
        code?.write(residuals[index - 1], to: &writer)
    }
}

/// Reads back the ticks a `TickColumnPlan` wrote, one point at a time.
struct TickColumnReader: Sendable {
    /// The tick of the point read last.
    private(set) var last: Int64
    private var prediction: UInt64
    private let reference: UInt64
    private let followsPrevious: Bool
    private let code: ResidualCode

    /// A reader of the first tick, for chunks of a single point (it reads nothing more).
    init(first: Int64) {
        last = first
        prediction = 0
        reference = 0
        followsPrevious = false
        code = .oneBit
    }

    /// Reads the predictor, reference delta and residual code that `writeCode` wrote.
    init(first: Int64, readingCodeFrom reader: inout BitReader) throws(SeriesCodingError) {
        last = first
        followsPrevious = try reader.read(1) == TickPredictor.previousDelta.rawValue
        reference = UInt64(bitPattern: try reader.readSignedVarint())
        prediction = reference
        code = try ResidualCode.readTable(from: &reader, spendingBits: true)
    }

    /// The tick of the next point.
    @inline(__always)
    mutating func next(from reader: inout BitReader) throws(SeriesCodingError) -> Int64 {
        let residual = ZigZag.decode(try code.read(from: &reader))
        let delta = prediction &+ UInt64(bitPattern: residual)
        prediction = followsPrevious ? delta : reference
        last = Int64(bitPattern: UInt64(bitPattern: last) &+ delta)
        return last
    }
}
