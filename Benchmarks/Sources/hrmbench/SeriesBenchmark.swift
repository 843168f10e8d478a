import SeriesCoding

/// Series chunks (SeriesCoding): bytes per heart-rate sample and per beat at several chunk
/// sizes, next to a Prometheus XOR chunk counted on the same points (and Gorilla's published
/// 1.37 B per point on Facebook's data); then the time to decode an hour, and to rewrite the
/// open chunk.
struct SeriesBenchmark {
    let chunkSizes = [60, 256, 1024]
    let timingRuns = 2001

    func run() throws {
        let sizes = chunkSizes.map(String.init).joined(separator: " / ")
        print("series: chunk codec, bytes per point at chunk sizes \(sizes) (a SQLite row per sample, before v6: 60 B; Gorilla's paper: 1.37 B)")
        var data = SeriesBenchmarkData(seed: 13)
        let week = 7 * 86_400
        let strapMicroseconds = data.arrivals(count: week, periodMs: 1000, jitterMs: 30, driftPPM: 20)
        let strapRates = data.heartRates(count: week, steadiness: 0.6)
        let strapMilliseconds = strapMicroseconds.map { $0 / 1000 }
        reportSizes("1 Hz ±30 ms, a week, ms ticks", times: strapMilliseconds, values: strapRates, peer: true)
        reportSizes("1 Hz ±30 ms, a week, µs ticks", times: strapMicroseconds, values: strapRates, peer: false)

        let straps = 20, perStrap = 6 * 3600 * 4
        var fourHertz: [(times: [Int64], values: [Double])] = []
        for strap in 0..<straps {
            let times = data.arrivals(count: perStrap, periodMs: 250, jitterMs: 30, driftPPM: Double(strap * 3 - 30))
            fourHertz.append((times, data.heartRates(count: perStrap, steadiness: 0.85)))
        }
        reportSizes("20 straps 4 Hz ±30 ms, 6 h, ms ticks", series: fourHertz.map { ($0.times.map { $0 / 1000 }, $0.values) }, peer: true)
        reportSizes("20 straps 4 Hz ±30 ms, 6 h, µs ticks", series: fourHertz, peer: false)

        let beats = data.beats(count: 86_400)
        let beatSizes = chunkSizes.map { size in heartbeatChunks(beats, size: size).reduce(0) { $0 + $1.count } }
        report(
            "RR as heartbeat series, a day, 1/1024 s", perPoint(beatSizes, beats.count) + " per beat",
            "\(beats.filter(\.precededByGap).count) gaps in \(beats.count) beats")

        for size in chunkSizes {
            try reportDecodeTime(times: strapMilliseconds, values: strapRates, chunkSize: size, ticks: "ms")
        }
        try reportDecodeTime(times: strapMicroseconds, values: strapRates, chunkSize: 1024, ticks: "µs")
        try reportDecodeTime(beats: Array(beats.prefix(3600)), chunkSize: 1024)
        reportEncodeTime(times: strapMilliseconds, values: strapRates, chunkSize: 1024)
        print("")
    }

    private func reportSizes(_ name: String, times: [Int64], values: [Double], peer: Bool) {
        reportSizes(name, series: [(times, values)], peer: peer)
    }

    /// Bytes per point of each series cut in chunks of each size, summed over all series.
    private func reportSizes(_ name: String, series: [(times: [Int64], values: [Double])], peer: Bool) {
        let points = series.reduce(0) { $0 + $1.times.count }
        let sizes = chunkSizes.map { size in
            series.reduce(0) { total, one in total + chunks(of: one.times, size: size).reduce(0) { $0 + encode(one, $1).count } }
        }
        var note = "\(points) points"
        if peer {
            let peerSizes = chunkSizes.map { size in
                series.reduce(0) { total, one in
                    total + chunks(of: one.times, size: size).reduce(0) { $0 + PrometheusXORChunkSize.bytes(times: one.times[$1], values: one.values[$1]) }
                }
            }
            note += "; peer Prometheus XOR chunk \(perPoint(peerSizes, points))"
        }
        report(name, perPoint(sizes, points), note)
    }

    private func reportDecodeTime(times: [Int64], values: [Double], chunkSize: Int, ticks: String) throws {
        let hour = 3600
        let blobs = chunks(of: Array(times.prefix(hour)), size: chunkSize).map { encode((times, values), $0) }
        var decodedTimes: [Int64] = [], decodedValues: [Double] = []
        decodedTimes.reserveCapacity(hour)
        decodedValues.reserveCapacity(hour)
        let runs = try (0..<timingRuns).map { _ in
            try measure {
                decodedTimes.removeAll(keepingCapacity: true)
                decodedValues.removeAll(keepingCapacity: true)
                for blob in blobs {
                    try QuantitySeriesReader.decode(blob, appendingTimesTo: &decodedTimes, values: &decodedValues)
                }
            }
        }
        precondition(decodedTimes == Array(times.prefix(hour)) && decodedValues == Array(values.prefix(hour)), "the decoded hour differs")
        reportMedian("decode 3600 points, \(chunkSize)-point chunks, \(ticks)", runs, count: hour, unit: "point")
    }

    private func reportDecodeTime(beats: [(offset: Int64, precededByGap: Bool)], chunkSize: Int) throws {
        let blobs = heartbeatChunks(beats, size: chunkSize)
        var decoded = 0
        let runs = try (0..<timingRuns).map { _ in
            try measure {
                decoded = 0
                for blob in blobs {
                    var reader = try HeartbeatSeriesReader(blob)
                    while try reader.next() != nil { decoded += 1 }
                }
            }
        }
        precondition(decoded == beats.count, "\(decoded) of \(beats.count) beats decoded")
        reportMedian("decode \(beats.count) beats, \(chunkSize)-beat chunks", runs, count: beats.count, unit: "beat")
    }

    private func reportMedian(_ name: String, _ runs: [Double], count: Int, unit: String) {
        let seconds = median(runs)
        report(name, "\(format(seconds * 1e6, 1)) µs", "median of \(runs.count); \(format(seconds * 1e9 / Double(count), 1)) ns/\(unit)")
    }

    private func reportEncodeTime(times: [Int64], values: [Double], chunkSize: Int) {
        var encoder = QuantitySeriesEncoder()
        for index in 0..<chunkSize { encoder.append(time: times[index], value: values[index]) }
        var bytes = 0
        let runs = (0..<timingRuns).map { _ in measure { bytes = encoder.encoded().count } }
        report("encode (rewrite) a \(chunkSize)-point chunk", "\(format(median(runs) * 1e6, 1)) µs", "median of \(timingRuns); \(bytes) B")
    }

    /// Beats cut in chunks of `size`, each a heartbeat series of its own starting at its first beat.
    private func heartbeatChunks(_ beats: [(offset: Int64, precededByGap: Bool)], size: Int) -> [[UInt8]] {
        stride(from: 0, to: beats.count, by: size).map { start in
            var encoder = HeartbeatSeriesEncoder()
            for beat in beats[start..<min(start + size, beats.count)] {
                encoder.append(offset: beat.offset - beats[start].offset, precededByGap: beat.precededByGap)
            }
            return encoder.encoded()
        }
    }

    private func chunks(of times: [Int64], size: Int) -> [Range<Int>] {
        stride(from: 0, to: times.count, by: size).map { $0..<min($0 + size, times.count) }
    }

    private func encode(_ series: (times: [Int64], values: [Double]), _ range: Range<Int>) -> [UInt8] {
        var encoder = QuantitySeriesEncoder()
        encoder.reserveCapacity(range.count)
        for index in range { encoder.append(time: series.times[index], value: series.values[index]) }
        return encoder.encoded()
    }

    private func perPoint(_ sizes: [Int], _ points: Int) -> String {
        sizes.map { format(Double($0) / Double(points), 2) }.joined(separator: " / ") + " B"
    }
}
