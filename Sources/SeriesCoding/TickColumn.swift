/// How a chunk predicts each time (see `SeriesFormat`).
enum TickPredictor: UInt64, Sendable {
    /// Each delta by the delta before it (the first by the reference delta): delta of delta.
    case previousDelta = 0
    /// Each delta by the chunk's reference (median) delta.
    case referenceDelta = 1
    /// Each time by the next point of a grid of times one period apart, which follows the
    /// points (format version 2 on).
    case grid = 2
}

/// A grid of times `period` ticks apart (`TickPredictor.grid`): each time is predicted one
/// period after the grid point of the time before it, the grid point of a time being the
/// grid time nearest it. A lost point (two periods apart) or a clock that drifts moves the
/// grid with the points. All arithmetic wraps in 64 bits.
struct TickGrid: Sendable {
    let period: Int64
    /// The grid point of the time read or written last.
    private var point: Int64

    /// The grid of `period` (> 0) that passes `phase` ticks before `first`.
    init(period: Int64, first: Int64, phase: Int64) {
        self.period = period
        point = first &- phase
    }

    /// The prediction of the next time.
    @inline(__always)
    var prediction: Int64 { point &+ period }

    /// Moves on past `time`, which came `residual` after the prediction.
    @inline(__always)
    mutating func advance(to time: Int64, residual: Int64) {
        point = time &- Self.offset(of: residual, period: period)
    }

    /// The offset of `value` from the nearest multiple of `period` (> 0), from −period/2 to
    /// period/2 (a value halfway between two keeps the offset of the multiple toward zero).
    @inline(__always)
    static func offset(of value: Int64, period: Int64) -> Int64 {
        // |remainder| < period, of the sign of value, so none of these overflow.
        let remainder = value % period
        if remainder > 0, period - remainder < remainder { return remainder - period }
        if remainder < 0, period + remainder < -remainder { return remainder + period }
        return remainder
    }
}

/// The times of a chunk planned for writing: the predictor and residual code that make them
/// smallest, and each point's zigzag-mapped residual. All arithmetic wraps in 64 bits, so any
/// `Int64` ticks round-trip.
struct TickColumnPlan {
    let first: Int64
    let predictor: TickPredictor
    /// The median delta; for the grid, its period.
    let referenceDelta: Int64
    /// The grid only: how far the first time lies past its grid point.
    let gridPhase: Int64
    /// The code of the residuals; nil for fewer than two points.
    let code: ResidualCode?
    /// Residual `i` belongs to point `i + 1`.
    let residuals: [UInt64]

    private struct Candidate {
        var predictor: TickPredictor
        var reference: Int64
        var phase: Int64 = 0
        var residuals: [UInt64]
        var code = ResidualCode.oneBit
        /// The bits the header fields of the candidate and its residuals take.
        var bits = 0

        init(_ predictor: TickPredictor, reference: Int64, phase: Int64 = 0, residuals: [UInt64]) {
            (self.predictor, self.reference, self.phase, self.residuals) = (predictor, reference, phase, residuals)
            var histogram = BitLengthHistogram()
            for residual in residuals { histogram.add(residual) }
            let (code, residualBits) = ResidualCode.cheapest(for: histogram, spendingBits: true)
            self.code = code
            bits = 2 + BitWriter.varintBitCount(ZigZag.encode(reference)) + 2 + 7 * code.bucketCount + residualBits
            if predictor == .grid { bits += BitWriter.varintBitCount(ZigZag.encode(phase)) }
        }
    }

    init(_ ticks: [Int64]) {
        first = ticks.first ?? 0
        let deltas = zip(ticks, ticks.dropFirst()).map { Int64(bitPattern: UInt64(bitPattern: $1) &- UInt64(bitPattern: $0)) }
        guard !deltas.isEmpty else {
            (predictor, referenceDelta, gridPhase, code, residuals) = (.previousDelta, 0, 0, nil, [])
            return
        }
        let reference = deltas.sorted()[deltas.count / 2]
        var best = Candidate(.referenceDelta, reference: reference, residuals: Self.deltaResiduals(deltas, reference: reference, following: false))
        var candidates = [Candidate(.previousDelta, reference: reference, residuals: Self.deltaResiduals(deltas, reference: reference, following: true))]
        if let grid = Self.fittedGrid(ticks, deltas: deltas, reference: reference) {
            candidates.append(Candidate(.grid, reference: grid.period, phase: grid.phase, residuals: Self.gridResiduals(ticks, grid)))
        }
        for candidate in candidates where candidate.bits < best.bits { best = candidate }
        (predictor, referenceDelta, gridPhase, code, residuals) = (best.predictor, best.reference, best.phase, best.code, best.residuals)
    }

    private static func deltaResiduals(_ deltas: [Int64], reference: Int64, following: Bool) -> [UInt64] {
        var prediction = reference
        return deltas.map { delta in
            defer { if following { prediction = delta } }
            return ZigZag.encode(delta &- prediction)
        }
    }

    /// The grid that the ticks lie around (a least-squares line through them against their
    /// grid indices, the indices counted in median deltas): its period and the phase of the
    /// first tick. Nil when the median delta is not positive or the fit is not a grid.
    private static func fittedGrid(_ ticks: [Int64], deltas: [Int64], reference: Int64) -> (period: Int64, phase: Int64)? {
        guard reference > 0 else { return nil }
        // Index and time (from the first) of each tick, as doubles: the fit need not be exact,
        // only good, since the residuals are measured against what it gives.
        var index = 0.0, elapsed = 0.0
        var sumX = 0.0, sumY = 0.0, sumXX = 0.0, sumXY = 0.0
        let step = Double(reference)
        for delta in deltas {
            index += (Double(delta) / step).rounded()
            elapsed += Double(delta)
            sumX += index
            sumY += elapsed
            sumXX += index * index
            sumXY += index * elapsed
        }
        let count = Double(ticks.count)
        let spread = sumXX - sumX * sumX / count
        guard spread > 0 else { return nil }
        let slope = ((sumXY - sumX * sumY / count) / spread).rounded()
        guard slope >= 1, slope < 0x1p62 else { return nil }
        let period = Int64(slope)
        // The line's time at index 0 lies `intercept` past the first tick.
        let intercept = ((sumY - slope * sumX) / count).rounded()
        guard intercept.magnitude < 0x1p62 else { return nil }
        return (period, TickGrid.offset(of: -Int64(intercept), period: period))
    }

    private static func gridResiduals(_ ticks: [Int64], _ fitted: (period: Int64, phase: Int64)) -> [UInt64] {
        var grid = TickGrid(period: fitted.period, first: ticks[0], phase: fitted.phase)
        return ticks.dropFirst().map { time in
            let residual = time &- grid.prediction
            grid.advance(to: time, residual: residual)
            return ZigZag.encode(residual)
        }
    }

    /// Writes the first tick (a zvarint).
    func writeFirst(to writer: inout BitWriter) {
        writer.writeSignedVarint(first)
    }

    /// Writes the predictor, the reference delta (the grid's period and phase) and the
    /// residual code (nothing for fewer than two points).
    func writeCode(to writer: inout BitWriter) {
        guard let code else { return }
        writer.write(predictor.rawValue, width: 2)
        writer.writeSignedVarint(referenceDelta)
        if predictor == .grid { writer.writeSignedVarint(gridPhase) }
        code.writeTable(to: &writer)
    }

    /// Writes the residual of point `index` (1 ..< count).
    func writeResidual(ofPoint index: Int, to writer: inout BitWriter) {
        code?.write(residuals[index - 1], to: &writer)
    }
}

/// Carries a planned time column on past the points it was planned for: the residual of each
/// further time under the plan's predictor and code, while the code holds it.
struct TickAppender: Sendable {
    let code: ResidualCode
    private let predictor: TickPredictor
    private let reference: Int64
    /// The time written last, and the delta before it.
    private var last: Int64
    private var lastDelta: Int64
    private var grid: TickGrid

    /// The state after the `ticks` that `plan` (of at least two points) was made for.
    init(_ plan: TickColumnPlan, ticks: [Int64]) {
        code = plan.code ?? .oneBit
        predictor = plan.predictor
        reference = plan.referenceDelta
        last = ticks[ticks.count - 1]
        lastDelta = last &- ticks[ticks.count - 2]
        grid = TickGrid(period: predictor == .grid ? reference : 1, first: ticks[0], phase: plan.gridPhase)
        if predictor == .grid {
            for time in ticks.dropFirst() { grid.advance(to: time, residual: time &- grid.prediction) }
        }
    }

    /// The zigzag-mapped residual of `time` as the next point; nil when the code cannot hold it.
    func residual(of time: Int64) -> UInt64? {
        let residual = switch predictor {
        case .previousDelta: time &- last &- lastDelta
        case .referenceDelta: time &- last &- reference
        case .grid: time &- grid.prediction
        }
        let zigzag = ZigZag.encode(residual)
        return code.holds(zigzag) ? zigzag : nil
    }

    /// Moves on past `time`, written with `residual`.
    mutating func advance(to time: Int64, residual: UInt64) {
        if predictor == .grid { grid.advance(to: time, residual: ZigZag.decode(residual)) }
        lastDelta = time &- last
        last = time
    }
}

/// Reads back the ticks a `TickColumnPlan` wrote, one point at a time.
struct TickColumnReader: Sendable {
    /// The tick of the point read last.
    private(set) var last: Int64
    private let mode: Mode
    /// What the next delta is predicted to be (delta predictors).
    private var prediction: Int64
    private var grid: TickGrid
    private let code: ResidualCode

    private enum Mode: Sendable {
        case previousDelta, referenceDelta, grid
    }

    /// A reader of the first tick, for chunks of a single point (it reads nothing more).
    init(first: Int64) {
        last = first
        mode = .referenceDelta
        prediction = 0
        grid = TickGrid(period: 1, first: first, phase: 0)
        code = .oneBit
    }

    /// Reads the predictor, reference delta and residual code that `writeCode` wrote, in the
    /// layout of format `version` (1: a one-bit predictor, delta predictors only).
    init(first: Int64, readingCodeFrom reader: inout BitReader, version: UInt8) throws(SeriesCodingError) {
        last = first
        let predictor = try reader.read(version == 1 ? 1 : 2)
        let reference = try reader.readSignedVarint()
        prediction = reference
        grid = TickGrid(period: 1, first: first, phase: 0)
        switch TickPredictor(rawValue: predictor) {
        case .previousDelta: mode = .previousDelta
        case .referenceDelta: mode = .referenceDelta
        case .grid:
            guard reference > 0 else { throw .corruptHeader(.gridPeriod(reference)) }
            mode = .grid
            grid = TickGrid(period: reference, first: first, phase: try reader.readSignedVarint())
        case nil: throw .corruptHeader(.timePredictor(predictor))
        }
        code = try ResidualCode.readTable(from: &reader, spendingBits: true)
    }

    /// The tick of the next point.
    @inline(__always)
    mutating func next(from reader: inout BitReader) throws(SeriesCodingError) -> Int64 {
        let residual = ZigZag.decode(try code.read(from: &reader))
        switch mode {
        case .previousDelta:
            let delta = prediction &+ residual
            prediction = delta
            last = last &+ delta
        case .referenceDelta:
            last = last &+ prediction &+ residual
        case .grid:
            last = grid.prediction &+ residual
            grid.advance(to: last, residual: residual)
        }
        return last
    }
}
