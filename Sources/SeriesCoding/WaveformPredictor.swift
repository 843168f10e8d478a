/// How a waveform channel predicts each sample from the ones before it (`WaveformFormat`):
/// a fixed polynomial of order 0 to 4, or quantized linear prediction of order 1 to 12. The
/// encoder and the decoder run the same code, in `Int64` with wrapping arithmetic, so a
/// prediction is the same integer on both sides and no input traps.
enum WaveformPredictor: Hashable, Sendable {
    /// The highest fixed polynomial order.
    static let maximumFixedOrder = 4
    /// The highest linear prediction order.
    static let maximumLinearOrder = 12

    /// The polynomial through the last `order` samples, extended by one: 0; x₋₁; 2x₋₁ − x₋₂;
    /// 3x₋₁ − 3x₋₂ + x₋₃; 4x₋₁ − 6x₋₂ + 4x₋₃ − x₋₄.
    case fixed(order: Int)
    /// Σ coefficients[j] · x₋₍ⱼ₊₁₎, shifted right by `shift` (rounding toward −∞).
    case linear(coefficients: [Int64], shift: Int)

    /// How many samples it predicts from.
    var order: Int {
        switch self {
        case .fixed(let order): order
        case .linear(let coefficients, _): coefficients.count
        }
    }

    /// The highest fixed order the lead-in uses: sample i < `order` is predicted by the
    /// fixed polynomial of order min(i, 2).
    static let leadInOrder = 2

    /// The samples written as they are: the first, unless nothing is predicted from it.
    var verbatimCount: Int { min(order, 1) }

    /// The residual of every sample after the verbatim one, zigzag-mapped: the lead-in (the
    /// samples before `order`, by the fixed polynomials of order min(i, `leadInOrder`)),
    /// then the sample less its prediction. `Int32` samples and coefficients of at most 16 bits
    /// give residuals of at most 53 bits.
    func residuals(of samples: [Int64]) -> [UInt64] {
        let order = order, first = verbatimCount
        guard samples.count > first else { return [] }
        var residuals = [UInt64](repeating: 0, count: samples.count - first)
        samples.withUnsafeBufferPointer { x in
            residuals.withUnsafeMutableBufferPointer { out in
                let leadIn = min(order, x.count)
                for i in first..<leadIn {
                    out[i &- first] = ZigZag.encode(x[i] &- Self.fixedPrediction(x, at: i, order: min(i, Self.leadInOrder)))
                }
                guard x.count > order else { return }
                switch self {
                case .fixed(let order):
                    for i in order..<x.count { out[i &- first] = ZigZag.encode(x[i] &- Self.fixedPrediction(x, at: i, order: order)) }
                case .linear(let coefficients, let shift):
                    coefficients.withUnsafeBufferPointer { c in
                        for i in order..<x.count {
                            out[i &- first] = ZigZag.encode(x[i] &- Self.linearPrediction(x, at: i, coefficients: c, shift: shift))
                        }
                    }
                }
            }
        }
        return residuals
    }

    /// Turns `buffer`, the verbatim sample followed by residuals (not zigzag-mapped), into
    /// the samples, front to back, in place.
    func restore(_ buffer: inout [Int64]) {
        let order = order
        buffer.withUnsafeMutableBufferPointer { x in
            let leadIn = min(order, x.count)
            for i in verbatimCount..<leadIn {
                x[i] = x[i] &+ Self.fixedPrediction(UnsafeBufferPointer(x), at: i, order: min(i, Self.leadInOrder))
            }
            guard x.count > order else { return }
            switch self {
            case .fixed(0): break
            case .fixed(1): for i in 1..<x.count { x[i] = x[i] &+ x[i &- 1] }
            case .fixed(let order):
                for i in order..<x.count { x[i] = x[i] &+ Self.fixedPrediction(UnsafeBufferPointer(x), at: i, order: order) }
            case .linear(let coefficients, let shift):
                coefficients.withUnsafeBufferPointer { c in
                    for i in order..<x.count {
                        x[i] = x[i] &+ Self.linearPrediction(UnsafeBufferPointer(x), at: i, coefficients: c, shift: shift)
                    }
                }
            }
        }
    }

    @inline(__always)
    private static func fixedPrediction(_ x: UnsafeBufferPointer<Int64>, at i: Int, order: Int) -> Int64 {
        switch order {
        case 0: 0
        case 1: x[i &- 1]
        case 2: 2 &* x[i &- 1] &- x[i &- 2]
        case 3: 3 &* (x[i &- 1] &- x[i &- 2]) &+ x[i &- 3]
        default: 4 &* (x[i &- 1] &+ x[i &- 3]) &- 6 &* x[i &- 2] &- x[i &- 4]
        }
    }

    @inline(__always)
    private static func linearPrediction(_ x: UnsafeBufferPointer<Int64>, at i: Int, coefficients c: UnsafeBufferPointer<Int64>, shift: Int)
        -> Int64
    {
        var sum: Int64 = 0
        for j in 0..<c.count { sum = sum &+ c[j] &* x[i &- 1 &- j] }
        return sum >> Int64(shift)
    }
}
