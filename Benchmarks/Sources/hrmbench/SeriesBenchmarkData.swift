import Foundation
import SensorSimulator

/// Heart-rate series as straps deliver them, for the series benchmark: whole-bpm values that
/// wander between 50 and 180 bpm, arrival times with the jitter of a BLE link, and beats with
/// their RR intervals in 1/1024 s.
struct SeriesBenchmarkData {
    private var random: SeededGenerator

    init(seed: UInt64) { random = SeededGenerator(seed: seed) }

    /// A strap's arrivals: one notification every `periodMs` by the strap's own clock (off by
    /// `driftPPM`), each delayed or advanced by up to `jitterMs` (the link's connection events
    /// and the host), 0.2 % of them lost, and the strap off for 10 minutes every 12 hours.
    /// Times in microseconds since the Unix epoch, as the host clock reads them.
    mutating func arrivals(count: Int, periodMs: Double, jitterMs: Double, driftPPM: Double) -> [Int64] {
        let start = 1_767_225_600_000_000.0  // 2026-01-01T00:00:00Z
        let period = periodMs * 1000 * (1 + driftPPM / 1e6)
        let offDuration = 600_000_000.0, offEvery = 43_200_000_000.0
        var times: [Int64] = []
        times.reserveCapacity(count)
        var index = 0.0
        while times.count < count {
            let nominal = index * period
            index += 1
            if nominal.truncatingRemainder(dividingBy: offEvery) > offEvery - offDuration || random.nextUnit() < 0.002 { continue }
            let jitter = (random.nextUnit() * 2 - 1) * jitterMs * 1000
            times.append(Int64((start + nominal + jitter).rounded(.down)))
        }
        return times
    }

    /// Heart rates in whole bpm, one per arrival: unchanged with probability `steadiness`,
    /// else a step of 1 (or, one time in five, 2 to 4) bpm, bounced back within 50...180.
    mutating func heartRates(count: Int, steadiness: Double) -> [Double] {
        var rate = 72
        return (0..<count).map { _ in
            if random.nextUnit() >= steadiness {
                let size = random.nextUnit() < 0.8 ? 1 : 2 + Int(random.nextUnit() * 3)
                rate += random.nextUnit() < 0.5 ? -size : size
                if rate < 50 || rate > 180 { rate = min(max(100 + (100 - rate), 50), 180) }
            }
            return Double(rate)
        }
    }

    /// Beats: RR intervals in 1/1024 s around the wandering heart rate, with breathing's
    /// rhythm (±40 ms over about 4 s) and beat-to-beat noise (σ 15 ms); 0.5 % of beats are
    /// missed, and the beat after one is preceded by a gap. Offsets in 1/1024 s from the
    /// series start.
    mutating func beats(count: Int) -> [(offset: Int64, precededByGap: Bool)] {
        let rates = heartRates(count: count, steadiness: 0.7)
        var beats: [(offset: Int64, precededByGap: Bool)] = []
        beats.reserveCapacity(count)
        var offset: Int64 = 0, elapsedMs = 0.0, missed = false
        for rate in rates {
            let rrMs = 60_000 / rate + 40 * sin(elapsedMs / 4000 * 2 * .pi) + 15 * random.nextNormal()
            elapsedMs += rrMs
            offset += Int64((rrMs * 1.024).rounded())
            if random.nextUnit() < 0.005 {
                missed = true
                continue
            }
            beats.append((offset, missed))
            missed = false
        }
        return beats
    }

    /// The Heart Rate Measurements a strap sends for `beats`: one a second by its clock, each
    /// carrying the RR intervals (1/1024 s, oldest first) of the beats since the one before,
    /// and arriving within ±`jitterMs` of its second (microseconds since the Unix epoch, from
    /// 2026-01-01T00:00:00Z). A beat after a missed one has no interval: the strap cannot
    /// tell it.
    mutating func rrNotifications(_ beats: [(offset: Int64, precededByGap: Bool)], jitterMs: Double) -> [(arrival: Int64, intervals: [Int64])] {
        let start: Int64 = 1_767_225_600_000_000
        var notifications: [(arrival: Int64, intervals: [Int64])] = []
        var intervals: [Int64] = []
        var second: Int64 = 1
        var previous: Int64?
        func send() {
            let jitter = Int64(((random.nextUnit() * 2 - 1) * jitterMs * 1000).rounded(.down))
            if !intervals.isEmpty { notifications.append((start + second * 1_000_000 + jitter, intervals)) }
            intervals.removeAll()
            second += 1
        }
        for beat in beats {
            while beat.offset > second * 1024 { send() }
            if let previous, !beat.precededByGap { intervals.append(beat.offset - previous) }
            previous = beat.offset
        }
        send()
        return notifications
    }
}

/// The bytes a Prometheus XOR chunk (Gorilla adapted to millisecond ticks) takes for the same
/// points, counted from its published layout rather than written: a 2-byte count, the first
/// time (varint) and value (64 bits), the first delta (uvarint), then each delta of delta as
/// `0`, `10` + 14, `110` + 17, `1110` + 20 or `1111` + 64 bits, and each value as Gorilla's
/// XOR (`0`; `10` + the bits in the previous window; `11` + 5 bits of leading zeros, at most
/// 31, + 6 bits of length + the meaningful bits).
enum PrometheusXORChunkSize {
    static func bytes(times: ArraySlice<Int64>, values: ArraySlice<Double>) -> Int {
        guard let firstTime = times.first, let firstValue = values.first else { return 2 }
        var bits = 16 + varintBits(UInt64(bitPattern: (firstTime << 1) ^ (firstTime >> 63))) + 64
        var previousTime = firstTime, previousDelta: Int64 = 0
        var previousBits = firstValue.bitPattern, window: (leading: Int, trailing: Int)?
        for (index, (time, value)) in zip(times, values).enumerated().dropFirst() {
            let delta = time - previousTime
            if index == 1 {
                bits += varintBits(UInt64(bitPattern: delta))
            } else {
                let dod = delta - previousDelta
                bits += dod == 0 ? 1 : fits(dod, 14) ? 16 : fits(dod, 17) ? 20 : fits(dod, 20) ? 24 : 68
            }
            (previousTime, previousDelta) = (time, delta)
            let xor = value.bitPattern ^ previousBits
            previousBits = value.bitPattern
            guard xor != 0 else {
                bits += 1
                continue
            }
            let leading = min(xor.leadingZeroBitCount, 31), trailing = xor.trailingZeroBitCount
            if let window, leading >= window.leading, trailing >= window.trailing {
                bits += 2 + 64 - window.leading - window.trailing
            } else {
                bits += 2 + 5 + 6 + 64 - leading - trailing
                window = (leading, trailing)
            }
        }
        return (bits + 7) / 8
    }

    /// Whether `value` lies in the signed range of `width` bits, as Prometheus tests it.
    private static func fits(_ value: Int64, _ width: Int64) -> Bool {
        -((1 << (width - 1)) - 1) <= value && value <= 1 << (width - 1)
    }

    private static func varintBits(_ value: UInt64) -> Int {
        8 * max(1, (64 - value.leadingZeroBitCount + 6) / 7)
    }
}
