import HealthModel

extension HealthStore {
    /// How many samples one analysis (zones, HRV) reads at most (``HeartAnalysisBudget``): past
    /// it the analysis is refused with `limitReached`. Each analysis streams the series and
    /// keeps a few numbers per series.
    public static var analysisSampleBudget: Int { HeartAnalysisBudget.samples }

    /// The heart-rate variability of the RR intervals matching `query` (its type is taken to
    /// be `rrInterval`), read as heartbeat series: each series (one source and device) in
    /// start order, and a beat's successive difference counted only when the beat is not
    /// preceded by a gap: its stored flag is clear and the beat before it in the series is in
    /// the range and ends where it starts (a deletion or the edge of the range leaves a gap
    /// too).
    public func heartRateVariability(_ query: SampleQuery) throws(HealthStoreError) -> HeartRateVariability? {
        try heartRateVariability([query])
    }

    /// The same over the RR intervals of every query (a person's straps over their
    /// assignments), read within one analysis budget; each query's type is taken to be
    /// `rrInterval`. Beats are adjacent only within one source and device.
    public func heartRateVariability(_ queries: [SampleQuery]) throws(HealthStoreError) -> HeartRateVariability? {
        var accumulator = HeartRateVariability.Accumulator()
        var previous: [SeriesIdentity: (start: Int64, value: Double)] = [:]
        var read = 0
        for query in queries {
            var query = query
            query.type = .rrInterval
            try enumerateWithinBudget(query, "heart-rate variability", read: &read) { item, contexts in
                let context = contexts.context(item.context)
                let identity = SeriesIdentity(source: context.source.name, device: context.device?.localIdentifier)
                let earlier = previous[identity]
                let follows = earlier.map { ChunkShape.Span.adjacentBeats($0, (item.start, item.value)) } ?? false
                previous[identity] = (item.start, item.value)
                accumulator.add(item.value, after: follows && !item.precededByGap ? earlier?.value : nil)
            }
        }
        return accumulator.variability
    }

    /// The time in heart-rate zones of `maximumHeartRate` over the heart-rate samples matching
    /// `query` (its type is taken to be `heartRate`); nil without any.
    public func heartRateZones(_ query: SampleQuery, maximumHeartRate: Double) throws(HealthStoreError) -> HeartRateZones? {
        try heartRateZones([query], bounds: ZoneBounds(maximumHeartRate: maximumHeartRate))
    }

    /// The time in the zones that start at `bounds` over the heart-rate samples of every query
    /// (a person's straps over their assignments), read within one analysis budget; nil
    /// without any.
    public func heartRateZones(_ queries: [SampleQuery], bounds: ZoneBounds) throws(HealthStoreError) -> HeartRateZones? {
        var accumulator = HeartRateZones.Accumulator(bounds: bounds)
        var read = 0
        for query in queries {
            var query = query
            query.type = .heartRate
            try enumerateWithinBudget(query, "heart-rate zones", read: &read) { item, contexts in
                let device = contexts.context(item.context).device?.localIdentifier ?? ""
                accumulator.add(item.value, at: Double(item.start) / 1_000_000, device: device)
            }
        }
        return accumulator.isEmpty ? nil : accumulator.zones
    }

    /// The items of `query` oldest first, all of them, refused once `read` (the samples this
    /// analysis read so far, counted on) passes ``analysisSampleBudget``.
    private func enumerateWithinBudget(
        _ query: SampleQuery, _ analysis: String, read: inout Int, _ body: (SampleStream.Item, ChunkContexts) throws -> Void
    ) throws(HealthStoreError) {
        var query = query
        query.newestFirst = false
        let left = Self.analysisSampleBudget + 1 - read
        guard left > 0 else { throw Self.pastBudget(analysis) }
        query.limit = left
        try enumerateItems(query) { item, contexts in
            read += 1
            guard read <= Self.analysisSampleBudget else { return }
            try body(item, contexts)
        }
        guard read <= Self.analysisSampleBudget else { throw Self.pastBudget(analysis) }
    }

    private static func pastBudget(_ analysis: String) -> HealthStoreError {
        .limitReached("\(analysis) reads at most \(analysisSampleBudget) samples, and the range holds more: ask for a shorter range")
    }
}

/// One heartbeat series: a source's beats from one device.
private struct SeriesIdentity: Hashable {
    var source: String
    var device: String?
}
