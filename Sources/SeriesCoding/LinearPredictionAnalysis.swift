/// The encoder's side of linear prediction: the autocorrelation of a windowed channel, the
/// Levinson–Durbin recursion from it to the predictors of every order, and their coefficients
/// quantized to integers. Floating point is used only to find coefficients; the chunk holds
/// the integers, and prediction from them is integer arithmetic (`WaveformPredictor`).
enum LinearPredictionAnalysis {
    /// The windows the encoder tries. Tapered windows (Tukey's shape, the cosine edges
    /// replaced by the cubic smoothstep 3t² − 2t³, which stays within 0.011 of them and needs no
    /// trigonometry) weigh the ends of a chunk, cut anywhere in a signal, less in its
    /// autocorrelation.
    enum Window: CaseIterable {
        /// Tapering the outer half (a quarter at each end).
        case tukeyHalf
        /// Tapering an eighth at each end.
        case tukeyQuarter
        /// No window.
        case rectangle

        /// The share of the samples in the tapered ends.
        var taper: Double {
            switch self {
            case .tukeyHalf: 0.5
            case .tukeyQuarter: 0.25
            case .rectangle: 0
            }
        }

        /// The window's weights for `count` samples.
        func weights(_ count: Int) -> [Double] {
            var weights = [Double](repeating: 1, count: count)
            let edge = Int(taper * Double(count) / 2)
            guard edge > 0 else { return weights }
            for i in 0..<edge {
                let t = Double(i) / Double(edge)
                let weight = t * t * (3 - 2 * t)
                weights[i] = weight
                weights[count - 1 - i] = weight
            }
            return weights
        }
    }

    /// The autocorrelation of `samples` weighted by `weights`, at lags 0 ... `maximumLag`.
    static func autocorrelation(_ samples: [Int64], weights: [Double], maximumLag: Int) -> [Double] {
        let count = samples.count
        var windowed = [Double](repeating: 0, count: count)
        // Not centred on the mean: fitted with an offset (gravity on one axis), the predictor's
        // coefficients sum to about 1 and follow it; fitted without, they would leave part of
        // it in every residual.
        for i in 0..<count { windowed[i] = Double(samples[i]) * weights[i] }
        var result = [Double](repeating: 0, count: maximumLag + 1)
        windowed.withUnsafeBufferPointer { x in
            for lag in 0...maximumLag where lag < count {
                var sum = 0.0
                for i in lag..<count { sum += x[i] * x[i - lag] }
                result[lag] = sum
            }
        }
        return result
    }

    /// The predictor of every order 1 ... `maximumOrder` from autocorrelation `r` (Levinson–
    /// Durbin), each with its prediction error (the windowed residual's energy): element
    /// `p − 1` holds p coefficients, x̂ = Σ cⱼ · x₋₍ⱼ₊₁₎. Stops early when the error vanishes
    /// or the recursion turns unstable.
    static func predictors(autocorrelation r: [Double], maximumOrder: Int) -> [(coefficients: [Double], error: Double)] {
        guard let energy = r.first, energy > 0 else { return [] }
        // A touch of white noise (lag 0 raised by 1e-9) keeps the recursion well conditioned.
        var error = energy * (1 + 1e-9)
        var coefficients: [Double] = []
        var result: [(coefficients: [Double], error: Double)] = []
        for order in 1...min(maximumOrder, r.count - 1) {
            var reflection = r[order]
            for j in 0..<(order - 1) { reflection -= coefficients[j] * r[order - 1 - j] }
            reflection /= error
            guard reflection.isFinite, reflection.magnitude < 1 else { break }
            var next = coefficients
            next.append(reflection)
            for j in 0..<(order - 1) { next[j] = coefficients[j] - reflection * coefficients[order - 2 - j] }
            coefficients = next
            error *= 1 - reflection * reflection
            result.append((coefficients, error))
            guard error > 0 else { break }
        }
        return result
    }

    /// The predictors of every order 1 ... `maximumOrder` that minimise Σ wᵢ·eᵢ² over the
    /// samples from `maximumOrder` on (the covariance method, weighted): the normal
    /// equations' matrix is factored once (Cholesky), and each order solves with its leading
    /// block. With weights from a previous residual, 1 / |e|, this approaches the least
    /// absolute residuals, which a Rice code rewards, where plain least squares chases the
    /// few largest (the QRS spikes of an ECG). Each comes with its weighted error Σ wᵢ·eᵢ².
    static func predictors(_ samples: [Int64], weights: [Double], maximumOrder order: Int) -> [(coefficients: [Double], error: Double)] {
        let count = samples.count
        guard order >= 1, count > order else { return [] }
        let x = samples.map(Double.init)
        // matrix[j][k] = Σ w·x₋₍ⱼ₊₁₎·x₋₍ₖ₊₁₎, vector[j] = Σ w·x·x₋₍ⱼ₊₁₎.
        var matrix = [Double](repeating: 0, count: order * order)
        var vector = [Double](repeating: 0, count: order)
        var energy = 0.0
        x.withUnsafeBufferPointer { x in
            for i in order..<count {
                let w = weights[i]
                energy += w * x[i] * x[i]
                for j in 0..<order {
                    let wx = w * x[i - 1 - j]
                    vector[j] += wx * x[i]
                    for k in 0...j { matrix[j * order + k] += wx * x[i - 1 - k] }
                }
            }
        }
        // Cholesky: matrix = L·Lᵀ, L in the lower triangle; a touch of ridge keeps it definite.
        var lower = [Double](repeating: 0, count: order * order)
        for j in 0..<order {
            let ridge = matrix[j * order + j] * 1e-10 + 1e-9
            for k in 0...j {
                var sum = matrix[j * order + k] + (j == k ? ridge : 0)
                for m in 0..<k { sum -= lower[j * order + m] * lower[k * order + m] }
                if j == k {
                    guard sum > 0 else { return Self.solve(lower, vector, energy: energy, order: order, upTo: j) }
                    lower[j * order + j] = sum.squareRoot()
                } else {
                    lower[j * order + k] = sum / lower[k * order + k]
                }
            }
        }
        return Self.solve(lower, vector, energy: energy, order: order, upTo: order)
    }

    /// The solutions of orders 1 ... `usable` from the factor `lower` of the full order, and
    /// their errors: the weighted `energy` of the samples less ‖y‖² of the order's part of y.
    private static func solve(_ lower: [Double], _ vector: [Double], energy: Double, order: Int, upTo usable: Int)
        -> [(coefficients: [Double], error: Double)]
    {
        var result: [(coefficients: [Double], error: Double)] = []
        guard usable >= 1 else { return result }
        // Forward substitution once (L·y = b; y's leading part serves every order).
        var y = [Double](repeating: 0, count: usable)
        for j in 0..<usable {
            var sum = vector[j]
            for m in 0..<j { sum -= lower[j * order + m] * y[m] }
            y[j] = sum / lower[j * order + j]
        }
        var error = energy
        for size in 1...usable {
            error -= y[size - 1] * y[size - 1]
            var c = [Double](repeating: 0, count: size)
            for j in stride(from: size - 1, through: 0, by: -1) {
                var sum = y[j]
                for m in (j + 1)..<size { sum -= lower[m * order + j] * c[m] }
                c[j] = sum / lower[j * order + j]
            }
            guard c.allSatisfy(\.isFinite) else { break }
            result.append((c, max(error, 0)))
        }
        return result
    }

    /// `coefficients` as integers of `precision` bits (two's complement) over 2^shift, the
    /// shift as large as the largest coefficient allows (at most `WaveformFormat`'s 31).
    /// Each coefficient is rounded with the rounding error of those before it carried into
    /// it, so that their sum stays close. nil when a coefficient is too large for the bits.
    static func quantized(_ coefficients: [Double], precision: Int) -> WaveformPredictor? {
        guard let largest = coefficients.map(\.magnitude).max(), largest.isFinite else { return nil }
        let limit = Int64(1) << Int64(precision - 1)
        // The largest coefficient times 2^shift is below 2^(precision − 1).
        var shift = WaveformFormat.maximumShift
        if largest > 0 {
            let exponent = Int(largest.exponent) + 1  // largest < 2^exponent
            shift = min(shift, precision - 1 - exponent)
        }
        guard shift >= 0 else { return nil }
        let scale = Double(sign: .plus, exponent: shift, significand: 1)
        var carried = 0.0
        var integers: [Int64] = []
        integers.reserveCapacity(coefficients.count)
        for coefficient in coefficients {
            let exact = coefficient * scale + carried
            let integer = max(-limit, min(limit - 1, Int64(exact.rounded())))
            carried = exact - Double(integer)
            integers.append(integer)
        }
        return .linear(coefficients: integers, shift: shift)
    }

    /// log₂ of a positive `value` to about 10⁻⁵ (the module does without the C library):
    /// the exponent, and ln of the significand s ∈ [1, 2) from the series of artanh((s − 1) / (s + 1)).
    static func log2(_ value: Double) -> Double {
        guard value > 0, value.isFinite else { return value > 0 ? .infinity : -.infinity }
        let significand = value.significand
        let t = (significand - 1) / (significand + 1), t2 = t * t
        let ln = 2 * t * (1 + t2 * (1.0 / 3 + t2 * (1.0 / 5 + t2 * (1.0 / 7 + t2 / 9))))
        return Double(value.exponent) + ln * 1.4426950408889634
    }
}
