import HealthModel

extension HealthStore {
    /// The heart-rate variability of the RR intervals matching `query` (its type is taken to
    /// be `rrInterval`), read as heartbeat series: each series (one source and device) in
    /// start order, and a beat's successive difference counted only when the beat is not
    /// preceded by a gap: its stored flag is clear and the beat before it in the series is in
    /// the range and ends where it starts (a deletion or the edge of the range leaves a gap
    /// too).
    public func heartRateVariability(_ query: SampleQuery) throws(HealthStoreError) -> HeartRateVariability? {
        var query = query
        query.type = .rrInterval
        query.newestFirst = false
        query.limit = nil
        var series: [SeriesIdentity: [BeatInterval]] = [:]
        var order: [SeriesIdentity] = []
        var previous: [SeriesIdentity: (start: Int64, value: Double)] = [:]
        try enumerateItems(query) { item, contexts in
            let context = contexts.context(item.context)
            let identity = SeriesIdentity(source: context.source.name, device: context.device?.localIdentifier)
            let follows = previous[identity].map { ChunkShape.Span.adjacentBeats($0, (item.start, item.value)) } ?? false
            previous[identity] = (item.start, item.value)
            if series[identity] == nil { order.append(identity) }
            series[identity, default: []].append(BeatInterval(milliseconds: item.value, precededByGap: item.precededByGap || !follows))
        }
        return HeartRateVariability(beats: order.flatMap { series[$0] ?? [] })
    }
}

/// One heartbeat series: a source's beats from one device.
private struct SeriesIdentity: Hashable {
    var source: String
    var device: String?
}
