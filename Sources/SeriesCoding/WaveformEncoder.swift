/// Builds a waveform chunk (`WaveformFormat`, kind `W`) instant by instant: 1 to 8 channels
/// of regularly sampled integers, each channel predicted and its residuals Rice-coded in the
/// way that makes it smallest.
///
/// The encoder keeps its samples (4 bytes each). `encoded()` chooses each channel's
/// predictor by measuring (the fixed polynomials and some 70 linear predictors of orders up
/// to 12, see `WaveformFormat`), so it costs about a millisecond per thousand samples in a
/// release build; reading the chunk back costs some 10 µs. There is no appending mode: each
/// call writes the whole chunk anew.
public struct WaveformEncoder: Sendable {
    /// Channels per instant.
    public let channels: Int
    /// The samples appended so far, interleaved by instant.
    public private(set) var samples: [Int32] = []

    /// An empty chunk of `channels` channels (1 ... `WaveformFormat.maximumChannels`).
    public init(channels: Int) {
        precondition((1...WaveformFormat.maximumChannels).contains(channels), "a waveform has 1 to 8 channels, not \(channels)")
        self.channels = channels
    }

    /// An encoder holding the samples of `chunk`, to append more.
    public init(resuming chunk: some Collection<UInt8>) throws(SeriesCodingError) {
        let reader = try WaveformReader(chunk)
        channels = reader.channels
        samples = try reader.samples()
    }

    /// The instants appended so far.
    public var count: Int { samples.count / channels }
    public var isEmpty: Bool { samples.isEmpty }

    /// Reserves room for `instants` instants in all.
    public mutating func reserveCapacity(_ instants: Int) {
        samples.reserveCapacity(instants * channels)
    }

    /// Adds one instant: one sample per channel, channel 0 first.
    public mutating func append(_ instant: some Collection<Int32>) {
        precondition(instant.count == channels, "an instant has one sample per channel (\(channels)), not \(instant.count)")
        samples.append(contentsOf: instant)
    }

    /// Adds whole instants, interleaved (channel 0 … channels − 1 of the first, then the next).
    public mutating func append(interleaved: some Collection<Int32>) {
        precondition(interleaved.count % channels == 0, "\(interleaved.count) samples are no whole number of \(channels)-channel instants")
        samples.append(contentsOf: interleaved)
    }

    /// Empties the encoder, keeping its storage for the next chunk.
    public mutating func removeAll() {
        samples.removeAll(keepingCapacity: true)
    }

    /// The chunk of all instants appended so far, each channel in the smallest way the search
    /// finds.
    public func encoded() -> [UInt8] {
        encoded(search: .standard)
    }

    /// The chunk, trying what `search` names.
    func encoded(search: WaveformChannelPlan.Search) -> [UInt8] {
        let count = count
        var writer = WaveformFormat.writer(count: count, channels: channels, capacity: 16 + samples.count)
        guard count > 0 else { return writer.finished() }
        let columns = (0..<channels).map { channel in
            stride(from: channel, to: samples.count, by: channels).map { Int64(samples[$0]) }
        }
        var plans = columns.map { WaveformChannelPlan($0, search: search) }
        // A reader takes a count beyond the chunk's bits for a cut chunk: constant channels
        // alone would spend too few.
        if plans.reduce(0, { $0 + $1.bitCount }) < count { plans[0] = .verbatim(columns[0]) }
        for (plan, column) in zip(plans, columns) { plan.write(column, to: &writer) }
        return writer.finished()
    }
}
