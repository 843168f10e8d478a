@testable import SeriesCoding
import TestSupport
import Testing

/// Series of many shapes, fixed by a seed: what straps send and what no strap should.
struct TestSeries {
    var random: SplitMix64

    init(seed: UInt64) { random = SplitMix64(seed: seed) }

    /// The shapes `series(_:count:)` makes.
    enum Shape: CaseIterable {
        /// 1 Hz arrivals with ±30 ms of jitter in milliseconds, whole bpm.
        case strapMilliseconds
        /// The same arrivals in microseconds.
        case strapMicroseconds
        /// 4 Hz, ±30 ms, milliseconds.
        case fourHertz
        /// RR intervals in seconds, multiples of 1/1024.
        case rrSeconds
        /// Values with one decimal (scale 10) and whole ones mixed.
        case decimals
        /// Doubles with 53 random bits, times anywhere in `Int64`.
        case randomBits
        /// Equal times and times going back, whole values.
        case equalAndBackwardTimes
        /// Days between points, sometimes.
        case hugeGaps
        /// `Int64.min`, `Int64.max` and neighbours as times; NaN, ±∞, ±0, subnormals and the
        /// largest doubles as values.
        case extremes
    }

    mutating func unit() -> Double { Double(random.next() >> 11) * 0x1p-53 }
    mutating func below(_ bound: Int) -> Int { Int(random.next() % UInt64(bound)) }

    mutating func series(_ shape: Shape, count: Int) -> [QuantitySeriesPoint] {
        switch shape {
        case .strapMilliseconds: zip(arrivals(count, periodMs: 1000, tick: 1), heartRates(count)).map(point)
        case .strapMicroseconds: zip(arrivals(count, periodMs: 1000, tick: 1000), heartRates(count)).map(point)
        case .fourHertz: zip(arrivals(count, periodMs: 250, tick: 1), heartRates(count)).map(point)
        case .rrSeconds:
            zip(arrivals(count, periodMs: 800, tick: 1), (0..<count).map { _ in Double(600 + below(600)) / 1024 }).map(point)
        case .decimals:
            zip(arrivals(count, periodMs: 1000, tick: 1), (0..<count).map { _ in Double(below(4000)) / (below(2) == 0 ? 10 : 1) }).map(point)
        case .randomBits:
            (0..<count).map { _ in QuantitySeriesPoint(time: Int64(bitPattern: random.next()), value: unit() * 1e6 - 5e5) }
        case .equalAndBackwardTimes:
            equalAndBackwardTimes(count)
        case .hugeGaps:
            hugeGaps(count)
        case .extremes:
            (0..<count).map { _ in QuantitySeriesPoint(time: Self.extremeTimes[below(Self.extremeTimes.count)], value: extremeValue()) }
        }
    }

    static let extremeTimes: [Int64] = [.min, .min + 1, -1, 0, 1, .max - 1, .max]

    static let extremeValues: [Double] = [
        .nan, -.nan, .signalingNaN, Double(bitPattern: 0x7FF8_0000_DEAD_BEEF), .infinity, -.infinity, 0, -0.0,
        .leastNonzeroMagnitude, -.leastNonzeroMagnitude, .leastNormalMagnitude, .greatestFiniteMagnitude,
        -.greatestFiniteMagnitude, 0x1p53, -0x1p53, 0x1p53 + 2, 1, 0.1, .pi, 72, 72.5,
    ]

    mutating func extremeValue() -> Double {
        below(4) == 0 ? Double(bitPattern: random.next()) : Self.extremeValues[below(Self.extremeValues.count)]
    }

    private func point(_ pair: (Int64, Double)) -> QuantitySeriesPoint { QuantitySeriesPoint(time: pair.0, value: pair.1) }

    /// Arrivals every `periodMs` with ±30 ms of jitter and a lost one now and then, in ticks of
    /// 1/`tick` ms, from 2026.
    mutating func arrivals(_ count: Int, periodMs: Double, tick: Double) -> [Int64] {
        var index = 0.0
        return (0..<count).map { _ in
            index += below(100) == 0 ? 2 : 1
            let milliseconds = 1_767_225_600_000 + index * periodMs + (unit() * 60 - 30)
            return Int64((milliseconds * tick).rounded(.down))
        }
    }

    /// Whole bpm wandering by 0 to 3 between 50 and 180.
    mutating func heartRates(_ count: Int) -> [Double] {
        var rate = 70
        return (0..<count).map { _ in
            rate = min(max(rate + below(7) - 3, 50), 180)
            return Double(rate)
        }
    }

    private mutating func equalAndBackwardTimes(_ count: Int) -> [QuantitySeriesPoint] {
        var time: Int64 = 1_000_000
        return (0..<count).map { _ in
            time += [0, 0, -5, -1000, 1, 1000][below(6)]
            return QuantitySeriesPoint(time: time, value: Double(below(200)))
        }
    }

    private mutating func hugeGaps(_ count: Int) -> [QuantitySeriesPoint] {
        var time: Int64 = 1_767_225_600_000_000
        return (0..<count).map { _ in
            time += below(5) == 0 ? Int64(below(30) + 1) * 86_400_000_000 : 1_000_000 + Int64(below(60_000)) - 30_000
            return QuantitySeriesPoint(time: time, value: Double(60 + below(100)))
        }
    }

    /// Beats: offsets in 1/1024 s summing RR intervals of 600 to 1200, gaps with probability
    /// `gapRate`.
    mutating func beats(_ count: Int, gapRate: Double) -> [Heartbeat] {
        var offset: Int64 = Int64(below(2000))
        var interval = 800
        return (0..<count).map { _ in
            interval = min(max(interval + below(61) - 30, 600), 1200)
            let gap = unit() < gapRate
            offset += Int64(interval) * (gap ? Int64(below(5) + 2) : 1)
            return Heartbeat(offset: offset, precededByGap: gap)
        }
    }
}

/// Points compared bit for bit: NaN payloads and the sign of zero count.
func sameBits(_ left: [QuantitySeriesPoint], _ right: [QuantitySeriesPoint]) -> Bool {
    left.count == right.count
        && zip(left, right).allSatisfy { $0.time == $1.time && $0.value.bitPattern == $1.value.bitPattern }
}

/// Encodes `points` in one go.
func encode(_ points: [QuantitySeriesPoint]) -> [UInt8] {
    var encoder = QuantitySeriesEncoder()
    for point in points { encoder.append(time: point.time, value: point.value) }
    return encoder.encoded()
}

/// Encodes `beats` in one go.
func encode(_ beats: [Heartbeat]) -> [UInt8] {
    var encoder = HeartbeatSeriesEncoder()
    for beat in beats { encoder.append(beat) }
    return encoder.encoded()
}

/// The value mode bit of a quantity chunk of at least one point: true for XOR.
func isXOR(_ chunk: [UInt8]) throws -> Bool {
    var (reader, _, _) = try SeriesFormat.readPrologue(chunk, kind: .quantity)
    return try reader.readBit()
}
