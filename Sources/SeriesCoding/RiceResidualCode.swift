/// A waveform channel's residuals in a partitioned Rice code (`WaveformFormat`): the channel's
/// instants cut into 2^order partitions of (nearly) equal length, each written in a Rice code
/// of its own parameter, or escaped into plain fields of one width when its residuals are too
/// wide for Rice to pay.
///
/// A Rice code of parameter k writes a zigzag-mapped residual u as ⌊u / 2ᵏ⌋ zero bits, a one
/// bit, and the low k bits of u: 1 + k bits and one more per 2ᵏ. Small residuals spread
/// around zero (what a good predictor leaves) come close to their entropy this way, and
/// partitions follow the signal's loud and quiet parts (a QRS complex, a still arm).
///
/// Each partition's *selector* — its parameter, or 31 for an escape — is written as the step
/// from the one before, itself in a Rice code of parameter 0 or 1 (the *step code*): a noisy
/// signal's parameters wander by one, an ECG's jump at each QRS complex and fall back. The
/// encoder chooses the partition order, the step code and every selector together, for the
/// fewest bits in all (a shortest path through the selectors, partition by partition), so
/// it may keep a parameter a step off the best for its partition when the steps cost more.
struct RiceResidualCode: Hashable, Sendable {
    /// The highest partition order the format allows (4 bits).
    static let maximumOrder = 15
    /// The highest Rice parameter; the selector after it (31) is an escape.
    static let maximumParameter = 30
    static let escapeSelector = 31
    /// The bits of the first selector, and of an escape's width field.
    static let selectorBits = 5
    static let escapeWidthBits = 6

    /// How one partition is written.
    enum Partition: Hashable, Sendable {
        /// A Rice code of parameter 0...30.
        case rice(Int)
        /// Plain fields of 1...64 bits.
        case escape(width: Int)

        /// The partition's selector: its parameter, or 31 for an escape.
        var selector: Int {
            switch self {
            case .rice(let parameter): parameter
            case .escape: RiceResidualCode.escapeSelector
            }
        }
    }

    /// log₂ of the number of partitions.
    let order: Int
    /// The Rice parameter (0 or 1) of the steps from one selector to the next.
    let stepParameter: Int
    /// Each partition's code, in order.
    let partitions: [Partition]

    /// The first instant of partition `index` of 2^`order` over `count` instants; partition
    /// `index` ends where `index + 1` starts (the last at `count`). Instants before the first
    /// residual (sample 0, written as it is) have none, so a partition may be empty.
    @inline(__always)
    static func start(ofPartition index: Int, order: Int, count: Int) -> Int {
        // count is below 2⁴⁸ (bounded by the bytes of a chunk, or by memory), index below 2¹⁶.
        (index &* count) >> order
    }

    /// Writes the residuals (zigzag-mapped) of instants `firstInstant ..< firstInstant +
    /// residuals.count`, each partition's selector first.
    func write(_ residuals: [UInt64], startingAt firstInstant: Int, to writer: inout BitWriter) {
        let count = firstInstant + residuals.count
        writer.write(UInt64(order), width: 4)
        writer.write(UInt64(stepParameter), width: 1)
        var previous: Int? = nil
        for (index, partition) in partitions.enumerated() {
            if let previous {
                Self.writeRice(ZigZag.encode(Int64(partition.selector - previous)), parameter: stepParameter, to: &writer)
            } else {
                writer.write(UInt64(partition.selector), width: Self.selectorBits)
            }
            previous = partition.selector
            let start = max(Self.start(ofPartition: index, order: order, count: count), firstInstant) - firstInstant
            let end = max(Self.start(ofPartition: index + 1, order: order, count: count), firstInstant) - firstInstant
            switch partition {
            case .rice(let parameter):
                for residual in residuals[start..<end] { Self.writeRice(residual, parameter: parameter, to: &writer) }
            case .escape(let width):
                writer.write(UInt64(width - 1), width: Self.escapeWidthBits)
                for residual in residuals[start..<end] { writer.write(residual, width: width) }
            }
        }
    }

    /// Writes `value` in the Rice code of `parameter`.
    @inline(__always)
    private static func writeRice(_ value: UInt64, parameter: Int, to writer: inout BitWriter) {
        var quotient = Int(truncatingIfNeeded: value >> UInt64(parameter))
        while quotient > 32 {
            writer.write(0, width: 32)
            quotient -= 32
        }
        writer.write(0, width: quotient)
        writer.write(1 << UInt64(parameter) | value & BitWriter.mask(parameter), width: parameter + 1)
    }

    /// Reads the residuals of instants `firstInstant ..< buffer.count` into `buffer` (not
    /// zigzag-mapped). A residual beyond 64 bits is a corrupt sample of `channel`.
    static func read(into buffer: inout [Int64], startingAt firstInstant: Int, channel: Int, from reader: inout BitReader) throws(SeriesCodingError) {
        let count = buffer.count
        let order = Int(try reader.read(4))
        let stepParameter = Int(try reader.read(1))
        var selector = 0
        for index in 0..<(1 << order) {
            if index == 0 {
                selector = Int(try reader.read(selectorBits))
            } else {
                let step = try reader.readZeroRun()
                // A step beyond the selectors' range: the next check fails without overflow.
                guard step <= 64 else { throw .corruptHeader(.riceSelector) }
                selector += Int(ZigZag.decode(UInt64(step) << UInt64(stepParameter) | (try reader.read(stepParameter))))
                guard (0...escapeSelector).contains(selector) else { throw .corruptHeader(.riceSelector) }
            }
            let first = max(start(ofPartition: index, order: order, count: count), firstInstant)
            let end = max(start(ofPartition: index + 1, order: order, count: count), firstInstant)
            if selector == escapeSelector {
                let width = Int(try reader.read(escapeWidthBits)) + 1
                for instant in first..<end { buffer[instant] = ZigZag.decode(try reader.read(width)) }
                continue
            }
            let parameter = UInt64(selector)
            for instant in first..<end {
                let quotient = UInt64(truncatingIfNeeded: try reader.readZeroRun())
                guard quotient <= UInt64.max >> parameter else { throw .corruptSample(channel: channel, instant: instant) }
                let low = try reader.read(selector)
                buffer[instant] = ZigZag.decode(quotient << parameter | low)
            }
        }
    }

    /// The partitioned code that writes `residuals` (zigzag-mapped, of instants
    /// `firstInstant ..< firstInstant + residuals.count`) in the fewest bits, and those bits,
    /// the order and step fields included. Tries every partition order whose partitions hold
    /// at least `PartitionStatistics.minimumPartition` instants, and both step codes.
    static func cheapest(for residuals: [UInt64], startingAt firstInstant: Int) -> (code: RiceResidualCode, bits: Int) {
        var statistics = PartitionStatistics(residuals, startingAt: firstInstant)
        var best: (code: RiceResidualCode, bits: Int)? = nil
        while true {
            for stepParameter in 0...1 {
                let (partitions, bits) = statistics.cheapestSelectors(stepParameter: stepParameter)
                let total = 4 + 1 + bits
                if total < best?.bits ?? .max {
                    best = (RiceResidualCode(order: statistics.order, stepParameter: stepParameter, partitions: partitions), total)
                }
            }
            guard statistics.order > 0 else { break }
            statistics.merge()
        }
        guard let best else { preconditionFailure("order 0 is always tried") }
        return best
    }

    /// About the bits `cheapest(for:startingAt:)` finds, in one pass over the residuals: each
    /// partition in the Rice code whose parameter suits its mean, the quotients taken as the
    /// sum over 2ᵏ, each selector as 3 bits, at the best partition order. For ranking
    /// predictors.
    static func estimatedBits(for residuals: [UInt64], startingAt firstInstant: Int) -> Int {
        let count = firstInstant + residuals.count
        var order = 0
        while order < maximumOrder, count >> (order + 1) >= 8, count >> (order + 1) > firstInstant { order += 1 }
        var sums = [Double](repeating: 0, count: 1 << order)
        var lengths = [Double](repeating: 0, count: 1 << order)
        residuals.withUnsafeBufferPointer { residuals in
            for index in 0..<(1 << order) {
                let start = max(Self.start(ofPartition: index, order: order, count: count), firstInstant) - firstInstant
                let end = max(Self.start(ofPartition: index + 1, order: order, count: count), firstInstant) - firstInstant
                var sum = 0.0
                for residual in residuals[start..<end] { sum += Double(residual) }
                (sums[index], lengths[index]) = (sum, Double(end - start))
            }
        }
        var best = Double.infinity
        while true {
            var bits = Double(4 + 1 + 2 + 3 * sums.count)
            for (sum, length) in zip(sums, lengths) where length > 0 {
                // The best parameter is near log₂(mean · ln 2); the bits are convex around it.
                let guess = max(0, Int((sum / length * 0.69 + 1).exponent))
                var fewest = Double.infinity
                for parameter in max(0, guess - 1)...guess + 1 {
                    fewest = min(fewest, length * Double(parameter + 1) + sum / Double(sign: .plus, exponent: parameter, significand: 1))
                }
                bits += fewest
            }
            best = min(best, bits)
            guard sums.count > 1 else { break }
            sums = (0..<sums.count / 2).map { sums[2 * $0] + sums[2 * $0 + 1] }
            lengths = (0..<lengths.count / 2).map { lengths[2 * $0] + lengths[2 * $0 + 1] }
        }
        return best < Double(Int.max / 4) ? Int(best) : Int.max / 4
    }
}

/// What choosing each partition's code needs: per partition, its length, its widest residual,
/// and for every Rice parameter k the sum of the residuals shifted right by k (the zero bits
/// they take). Partitions of order o − 1 are pairs of order o's, so merging halves the order.
private struct PartitionStatistics {
    static let parameters = RiceResidualCode.maximumParameter + 1
    /// Partitions with residuals wider than this are escaped: the sums stay far from
    /// overflow, and Rice 30 would spend 2¹⁰ zero bits and more on such a residual anyway.
    static let widestRiceResidual = 40

    /// The finest partitions hold at least this many instants.
    static let minimumPartition = 4

    /// The partition order described.
    private(set) var order: Int
    private var lengths: [Int]
    private var widest: [Int]
    /// `parameters` sums per partition.
    private var sums: [Int]

    /// The statistics of the finest partition order whose partitions hold at least
    /// `minimumPartition` instants, and more than those before the first residual.
    init(_ residuals: [UInt64], startingAt firstInstant: Int) {
        let count = firstInstant + residuals.count
        var order = 0
        while order < RiceResidualCode.maximumOrder, count >> (order + 1) >= Self.minimumPartition, count >> (order + 1) > firstInstant { order += 1 }
        self.order = order
        let partitions = 1 << order
        lengths = [Int](repeating: 0, count: partitions)
        widest = [Int](repeating: 0, count: partitions)
        sums = [Int](repeating: 0, count: partitions * Self.parameters)
        residuals.withUnsafeBufferPointer { residuals in
            for index in 0..<partitions {
                let start = max(RiceResidualCode.start(ofPartition: index, order: order, count: count), firstInstant) - firstInstant
                let end = max(RiceResidualCode.start(ofPartition: index + 1, order: order, count: count), firstInstant) - firstInstant
                let part = UnsafeBufferPointer(rebasing: residuals[start..<end])
                var any: UInt64 = 0
                for residual in part { any |= residual }
                lengths[index] = part.count
                widest[index] = BitLengthHistogram.length(of: any)
                guard widest[index] <= Self.widestRiceResidual else { continue }
                for parameter in 0..<min(Self.parameters, widest[index]) {
                    var sum: UInt64 = 0
                    for residual in part { sum &+= residual >> UInt64(parameter) }
                    sums[index * Self.parameters + parameter] = Int(truncatingIfNeeded: sum)
                }
            }
        }
    }

    /// Makes each pair of partitions one.
    mutating func merge() {
        let partitions = lengths.count / 2
        for index in 0..<partitions {
            lengths[index] = lengths[2 * index] + lengths[2 * index + 1]
            widest[index] = max(widest[2 * index], widest[2 * index + 1])
            for parameter in 0..<Self.parameters {
                sums[index * Self.parameters + parameter] =
                    sums[2 * index * Self.parameters + parameter] + sums[(2 * index + 1) * Self.parameters + parameter]
            }
        }
        lengths.removeLast(partitions)
        widest.removeLast(partitions)
        sums.removeLast(partitions * Self.parameters)
        order -= 1
    }

    /// Each partition's best selector on its own, and its bits.
    func bestSelectors() -> [(selector: Int, bits: Int)] {
        lengths.indices.map { index in
            var best = (selector: RiceResidualCode.escapeSelector, bits: bits(index, selector: RiceResidualCode.escapeSelector))
            guard widest[index] <= Self.widestRiceResidual else { return best }
            // The bits are convex in the parameter: stop once they grow.
            var previous = Int.max
            for parameter in 0...RiceResidualCode.maximumParameter {
                let bits = bits(index, selector: parameter)
                if bits < best.bits { best = (parameter, bits) }
                if bits > previous { break }
                previous = bits
            }
            return best
        }
    }

    /// The bits partition `index` takes with `selector`, its escape's width field included
    /// (`unusable` when Rice cannot hold a residual).
    private func bits(_ index: Int, selector: Int) -> Int {
        let length = lengths[index], widest = widest[index]
        if selector == RiceResidualCode.escapeSelector { return RiceResidualCode.escapeWidthBits + length * max(widest, 1) }
        guard widest <= Self.widestRiceResidual else { return Self.unusable }
        // Past the widest residual's length every quotient is 0.
        return length * (selector + 1) + (selector < widest ? sums[index * Self.parameters + selector] : 0)
    }

    /// More bits than any chunk: a choice never taken.
    private static let unusable = Int.max / 4

    /// The partitions' codes in the fewest bits with steps in the Rice code of
    /// `stepParameter`, and those bits (the first selector's field included). A shortest
    /// path over the selectors: `total[s]`, the fewest bits for the partitions so far ending
    /// with selector s, goes to the next partition through the cheapest step. A step of d
    /// costs 1 + m + (2d >> m) bits up and (2d − 1 >> m) + 1 + m down, linear in d but for
    /// the step of 0, so the cheapest way into each selector is found in one pass upward and
    /// one downward. Selectors below the lowest partition's own best, or above the highest,
    /// cost more bits in every partition (Rice's bits are convex in the parameter) and longer
    /// steps, so only those between are tried.
    func cheapestSelectors(stepParameter m: Int) -> ([RiceResidualCode.Partition], Int) {
        let own = bestSelectors()
        let lowest = own.map(\.selector).min() ?? 0, highest = own.map(\.selector).max() ?? 0
        let selectors = highest - lowest + 1
        let partitions = lengths.count
        // came[p * selectors + s]: the selector of partition p − 1 on the cheapest path to s.
        var came = [UInt8](repeating: 0, count: partitions * selectors)
        var total = (0..<selectors).map { RiceResidualCode.selectorBits + bits(0, selector: lowest + $0) }
        let stay = 1 + m, stepUp = 2 - m, firstDown = 2, stepDown = 2 - m
        var up = [(bits: Int, from: Int)](repeating: (0, 0), count: selectors)
        var down = up
        for index in 1..<max(partitions, 1) {
            for s in 0..<selectors {
                let here = (total[s] + stay, s)
                up[s] = s > 0 && up[s - 1].bits + stepUp < here.0 ? (up[s - 1].bits + stepUp, up[s - 1].from) : here
            }
            down[selectors - 1] = (Self.unusable, selectors - 1)
            for s in stride(from: selectors - 2, through: 0, by: -1) {
                let one = (total[s + 1] + firstDown, s + 1)
                down[s] = down[s + 1].bits + stepDown < one.0 ? (down[s + 1].bits + stepDown, down[s + 1].from) : one
            }
            for s in 0..<selectors {
                let way = down[s].bits < up[s].bits ? down[s] : up[s]
                total[s] = min(way.bits + bits(index, selector: lowest + s), Self.unusable)
                came[index * selectors + s] = UInt8(way.from)
            }
        }
        var last = 0
        for s in 1..<selectors where total[s] < total[last] { last = s }
        var codes = [RiceResidualCode.Partition](repeating: .rice(0), count: partitions)
        var selector = last
        for index in stride(from: partitions - 1, through: 0, by: -1) {
            let absolute = lowest + selector
            codes[index] = absolute == RiceResidualCode.escapeSelector ? .escape(width: max(widest[index], 1)) : .rice(absolute)
            selector = Int(came[index * selectors + selector])
        }
        return (codes, total[last])
    }
}
