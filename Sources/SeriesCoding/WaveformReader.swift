/// Reads a waveform chunk (`WaveformFormat`, kind `W`). The version, kind, count and channels
/// are checked when the reader is made (a count the bytes cannot hold is a truncated chunk, so
/// nothing is allocated for it); the subframes, each sample's range and the end (nothing after
/// the last subframe but zero padding) when the samples are read.
public struct WaveformReader: Sendable {
    /// Channels per instant (1 ... `WaveformFormat.maximumChannels`).
    public let channels: Int
    /// The instants the chunk declares.
    public let count: Int
    /// Positioned at the first subframe.
    private let reader: BitReader

    /// Checks the version, kind and header of `chunk`.
    public init(_ chunk: some Collection<UInt8>) throws(SeriesCodingError) {
        (reader, count, channels) = try WaveformFormat.readHeader(Array(chunk))
    }

    /// Every sample, interleaved by instant (`count × channels` of them).
    public func samples() throws(SeriesCodingError) -> [Int32] {
        var reader = reader
        var samples = [Int32](repeating: 0, count: count * channels)
        // Each channel's subframe covers every instant: decoded into a column, then spread.
        var column = [Int64](repeating: 0, count: count)
        for channel in 0..<(count > 0 ? channels : 0) {
            try Self.readSubframe(into: &column, channel: channel, from: &reader)
            try column.withUnsafeBufferPointer { column throws(SeriesCodingError) in
                try samples.withUnsafeMutableBufferPointer { samples throws(SeriesCodingError) in
                    var slot = channel
                    for instant in 0..<column.count {
                        let sample = Int32(truncatingIfNeeded: column[instant])
                        guard Int64(sample) == column[instant] else { throw .corruptSample(channel: channel, instant: instant) }
                        samples[slot] = sample
                        slot &+= channels
                    }
                }
            }
        }
        try reader.expectEnd(declaredCount: count)
        return samples
    }

    /// Every sample of `chunk`, interleaved by instant.
    public static func decode(_ chunk: some Collection<UInt8>) throws(SeriesCodingError) -> [Int32] {
        try WaveformReader(chunk).samples()
    }

    /// Reads one subframe into `column` (one element per instant), as 64-bit integers the
    /// caller checks.
    private static func readSubframe(into column: inout [Int64], channel: Int, from reader: inout BitReader) throws(SeriesCodingError) {
        switch WaveformChannelPlan.SubframeType(rawValue: try reader.read(2)) {
        case .constant:
            let width = Int(try reader.read(WaveformFormat.widthBits))
            let value = ZigZag.decode(try reader.read(width))
            for instant in column.indices { column[instant] = value }
        case .verbatim:
            let width = Int(try reader.read(WaveformFormat.widthBits))
            for instant in column.indices { column[instant] = ZigZag.decode(try reader.read(width)) }
        case .fixed:
            let order = try reader.read(3)
            guard order <= WaveformPredictor.maximumFixedOrder, order <= column.count else { throw .corruptHeader(.predictorOrder(order)) }
            try readPredicted(into: &column, by: .fixed(order: Int(order)), channel: channel, from: &reader)
        case .linear, nil:  // two bits: nil never comes
            let order = try reader.read(4) + 1
            guard order <= WaveformPredictor.maximumLinearOrder, order <= column.count else { throw .corruptHeader(.predictorOrder(order)) }
            let precision = Int(try reader.read(4)) + 1
            let shift = Int(try reader.read(5))
            var coefficients: [Int64] = []
            coefficients.reserveCapacity(Int(order))
            for _ in 0..<order {
                // Sign-extended from `precision` bits.
                let bits = try reader.read(precision) << UInt64(64 - precision)
                coefficients.append(Int64(bitPattern: bits) >> Int64(64 - precision))
            }
            try readPredicted(into: &column, by: .linear(coefficients: coefficients, shift: shift), channel: channel, from: &reader)
        }
    }

    /// Sample 0 and the residuals of a predicted subframe, and then the samples.
    private static func readPredicted(
        into column: inout [Int64], by predictor: WaveformPredictor, channel: Int, from reader: inout BitReader
    ) throws(SeriesCodingError) {
        if predictor.verbatimCount > 0 {
            let width = Int(try reader.read(WaveformFormat.widthBits))
            column[0] = ZigZag.decode(try reader.read(width))
        }
        try RiceResidualCode.read(into: &column, startingAt: predictor.verbatimCount, channel: channel, from: &reader)
        predictor.restore(&column)
    }
}
