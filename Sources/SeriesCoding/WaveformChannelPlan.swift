/// How the encoder writes one channel of a waveform chunk (`WaveformFormat`), chosen by
/// measuring: every predictor tried is estimated, the best few are sized exactly, header
/// fields included, and the smallest of them, verbatim and constant is kept.
struct WaveformChannelPlan {
    /// The subframe types, in their 2-bit field.
    enum SubframeType: UInt64 {
        case constant = 0
        case verbatim = 1
        case fixed = 2
        case linear = 3
    }

    enum Method {
        /// Every sample is this one.
        case constant(Int64)
        /// Each sample zigzag-mapped in `width` bits.
        case verbatim(width: Int)
        /// Sample 0 in `firstWidth` bits (unless the order is 0), then the residuals in `code`.
        case predicted(WaveformPredictor, firstWidth: Int, residuals: [UInt64], code: RiceResidualCode)
    }

    let method: Method
    /// The bits the channel takes, header fields included.
    let bitCount: Int

    /// What the search tries beyond the fixed predictors. The defaults were measured on
    /// ECG (simulated and MIT-BIH record 208, 130 and 360 Hz) and three-axis acceleration in
    /// chunks of 1024 instants: trying more windows, orders, precisions, finalists or rounds
    /// saves less than 0.1 % and costs as much time again.
    struct Search: Sendable {
        /// The highest linear prediction order tried (0: none).
        var maximumLinearOrder = WaveformPredictor.maximumLinearOrder
        /// The coefficient precisions tried, in bits. Coarse coefficients cost fewer header
        /// bits and often predict as well (6 bits gained most on the 360 Hz ECG).
        var precisions = [6, 8, 10, 12]
        /// The windows whose autocorrelation is tried.
        var windows: [LinearPredictionAnalysis.Window] = [.tukeyHalf, .rectangle]
        /// How many orders of each window's linear predictors, the best by their prediction
        /// error, are tried (and as many from each round of reweighting).
        var ordersPerWindow = 3
        /// Rounds of reweighted least squares after the autocorrelation's predictors, each
        /// from the best estimate so far.
        var reweightings = 2
        /// The smallest residual magnitude a weight takes (1 / max(|e|, floor)).
        var weightFloor = 2.0
        /// How many predictors, the best by estimate, are sized exactly.
        var finalists = 3

        static let standard = Search()
    }

    /// The smallest plan for `samples` (not empty): every predictor is estimated
    /// (`RiceResidualCode.estimatedBits`), and the best few sized exactly.
    init(_ samples: [Int64], search: Search = .standard) {
        precondition(!samples.isEmpty, "a channel of a chunk holds at least one sample")
        if samples.allSatisfy({ $0 == samples[0] }) {
            self = Self.constant(samples[0])
            return
        }
        var candidates: [(predictor: WaveformPredictor, bits: Int)] = []
        func consider(_ predictor: WaveformPredictor) {
            let residuals = RiceResidualCode.estimatedBits(for: predictor.residuals(of: samples), startingAt: predictor.verbatimCount)
            candidates.append((predictor, Self.headerBits(samples, predictor) + residuals))
        }
        func consider(_ coefficients: [Double]) {
            for precision in search.precisions {
                if let predictor = LinearPredictionAnalysis.quantized(coefficients, precision: precision) { consider(predictor) }
            }
        }
        for order in 0...min(WaveformPredictor.maximumFixedOrder, samples.count - 1) { consider(.fixed(order: order)) }
        let linearOrder = min(search.maximumLinearOrder, samples.count - 1)
        if linearOrder >= 1 {
            for window in search.windows {
                let weights = window.weights(samples.count)
                let r = LinearPredictionAnalysis.autocorrelation(samples, weights: weights, maximumLag: linearOrder)
                let predictors = LinearPredictionAnalysis.predictors(autocorrelation: r, maximumOrder: linearOrder)
                // Gaussian residuals of energy E cost about ½·log₂ E bits each.
                let ranked = Self.ranked(predictors, bitsPerSample: { 0.5 * LinearPredictionAnalysis.log2($0) }, count: samples.count)
                for (coefficients, _) in ranked.prefix(search.ordersPerWindow) { consider(coefficients) }
            }
            for _ in 0..<search.reweightings {
                guard let leader = candidates.min(by: { $0.bits < $1.bits })?.predictor else { break }
                let residuals = leader.residuals(of: samples)
                var weights = [Double](repeating: 0, count: samples.count)
                for (index, residual) in residuals.enumerated() {
                    weights[leader.verbatimCount + index] = 1 / max(Double(ZigZag.decode(residual)).magnitude, search.weightFloor)
                }
                let fitted = LinearPredictionAnalysis.predictors(samples, weights: weights, maximumOrder: linearOrder)
                // Σ|e|·(1/|e|)·e² is about Σ|e|: Laplacian residuals cost about log₂ of it each.
                let ranked = Self.ranked(fitted, bitsPerSample: LinearPredictionAnalysis.log2, count: samples.count)
                for (coefficients, _) in ranked.prefix(search.ordersPerWindow) { consider(coefficients) }
            }
        }
        candidates.sort { $0.bits < $1.bits }
        var best = Self.verbatim(samples)
        for (predictor, _) in candidates.prefix(search.finalists) {
            let plan = Self.predicted(samples, by: predictor)
            if plan.bitCount < best.bitCount { best = plan }
        }
        self = best
    }

    /// `predictors` ranked by the bits their errors promise, each coefficient taken as 20 bits.
    private static func ranked(
        _ predictors: [(coefficients: [Double], error: Double)], bitsPerSample: (Double) -> Double, count: Int
    ) -> [(coefficients: [Double], error: Double)] {
        let bits = predictors.map { Double(count) * bitsPerSample(max($0.error, 1e-9)) + Double(20 * $0.coefficients.count) }
        return predictors.indices.sorted { bits[$0] < bits[$1] }.map { predictors[$0] }
    }

    private init(method: Method, bitCount: Int) {
        self.method = method
        self.bitCount = bitCount
    }

    static func constant(_ value: Int64) -> WaveformChannelPlan {
        WaveformChannelPlan(method: .constant(value), bitCount: 2 + WaveformFormat.widthBits + width(of: ZigZag.encode(value)))
    }

    /// Each sample as it is; at least one bit each, even when all are 0.
    static func verbatim(_ samples: [Int64]) -> WaveformChannelPlan {
        let width = max(1, width(of: samples.reduce(0) { $0 | ZigZag.encode($1) }))
        return WaveformChannelPlan(method: .verbatim(width: width), bitCount: 2 + WaveformFormat.widthBits + samples.count * width)
    }

    /// `samples` predicted by `predictor`, their residuals in the cheapest code.
    static func predicted(_ samples: [Int64], by predictor: WaveformPredictor) -> WaveformChannelPlan {
        let residuals = predictor.residuals(of: samples)
        let (code, residualBits) = RiceResidualCode.cheapest(for: residuals, startingAt: predictor.verbatimCount)
        return WaveformChannelPlan(
            method: .predicted(predictor, firstWidth: firstWidth(samples, predictor), residuals: residuals, code: code),
            bitCount: headerBits(samples, predictor) + residualBits)
    }

    /// The bits of a predicted subframe before its residuals: type, predictor, sample 0.
    private static func headerBits(_ samples: [Int64], _ predictor: WaveformPredictor) -> Int {
        let predictorBits: Int
        switch predictor {
        case .fixed: predictorBits = 3
        case .linear(let coefficients, _): predictorBits = 4 + 4 + 5 + coefficients.count * precision(of: coefficients)
        }
        return 2 + predictorBits + predictor.verbatimCount * (WaveformFormat.widthBits + firstWidth(samples, predictor))
    }

    /// The width of sample 0 as it is (0 when the predictor does not write it).
    private static func firstWidth(_ samples: [Int64], _ predictor: WaveformPredictor) -> Int {
        predictor.verbatimCount > 0 ? width(of: ZigZag.encode(samples[0])) : 0
    }

    /// Writes the channel's subframe.
    func write(_ samples: [Int64], to writer: inout BitWriter) {
        switch method {
        case .constant(let value):
            let width = Self.width(of: ZigZag.encode(value))
            writer.write(SubframeType.constant.rawValue, width: 2)
            writer.write(UInt64(width), width: WaveformFormat.widthBits)
            writer.write(ZigZag.encode(value), width: width)
        case .verbatim(let width):
            writer.write(SubframeType.verbatim.rawValue, width: 2)
            writer.write(UInt64(width), width: WaveformFormat.widthBits)
            for sample in samples { writer.write(ZigZag.encode(sample), width: width) }
        case .predicted(let predictor, let firstWidth, let residuals, let code):
            switch predictor {
            case .fixed(let order):
                writer.write(SubframeType.fixed.rawValue, width: 2)
                writer.write(UInt64(order), width: 3)
            case .linear(let coefficients, let shift):
                let precision = Self.precision(of: coefficients)
                writer.write(SubframeType.linear.rawValue, width: 2)
                writer.write(UInt64(coefficients.count - 1), width: 4)
                writer.write(UInt64(precision - 1), width: 4)
                writer.write(UInt64(shift), width: 5)
                for coefficient in coefficients { writer.write(UInt64(bitPattern: coefficient), width: precision) }
            }
            if predictor.verbatimCount > 0 {
                writer.write(UInt64(firstWidth), width: WaveformFormat.widthBits)
                writer.write(ZigZag.encode(samples[0]), width: firstWidth)
            }
            code.write(residuals, startingAt: predictor.verbatimCount, to: &writer)
        }
    }

    /// The significant bits of a zigzag-mapped value.
    private static func width(of zigzag: UInt64) -> Int { BitLengthHistogram.length(of: zigzag) }

    /// The fewest bits (1...16) holding every coefficient in two's complement.
    static func precision(of coefficients: [Int64]) -> Int {
        let widest = coefficients.reduce(0) { max($0, BitLengthHistogram.length(of: UInt64(bitPattern: $1 < 0 ? ~$1 : $1))) }
        return widest + 1
    }
}
