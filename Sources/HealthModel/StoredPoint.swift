import Timestamps

/// What consecutive stored samples share: who wrote them, what measured them, their metadata.
/// Samples read from one chunk share one.
public struct SampleContext: Sendable, Hashable {
    public var source: HealthSource
    public var device: HealthDevice?
    public var metadata: SampleMetadata
    /// The gateway that sent the samples to the central store; nil for a local store's.
    public var gateway: String?

    public init(source: HealthSource, device: HealthDevice?, metadata: SampleMetadata, gateway: String? = nil) {
        self.source = source
        self.device = device
        self.metadata = metadata
        self.gateway = gateway
    }
}

/// A stored sample without its context: what a reader of many samples needs per sample. The
/// context is `contexts[context]` of the `SampleContexts` given with it.
public struct StoredPoint: Sendable, Hashable {
    /// The sample's identity in this store (its anchor; in the central store, `CentralReader.sampleID`).
    public var id: Int64
    public var start: Timestamp
    public var end: Timestamp
    /// The value in the type's canonical unit.
    public var value: Double
    /// Where the context is in the `SampleContexts` handed over with the point: equal numbers,
    /// equal contexts.
    public var context: Int

    public init(id: Int64, start: Timestamp, end: Timestamp, value: Double, context: Int) {
        self.id = id
        self.start = start
        self.end = end
        self.value = value
        self.context = context
    }
}

/// The contexts of the points read by one query, each kept once, so that a reader renders what
/// samples share once per context rather than once per sample.
public struct SampleContexts: Sendable {
    private var contexts: [SampleContext] = []
    private var indices: [SampleContext: Int] = [:]
    /// The number `index(of:)` gave last: consecutive samples mostly share their context.
    private var last: Int?

    public init() {}

    /// The context numbered `index`.
    public subscript(index: Int) -> SampleContext { contexts[index] }

    /// The number of `context`, added when it is new.
    public mutating func index(of context: SampleContext) -> Int {
        if let last, contexts[last] == context { return last }
        let number = indices[context] ?? {
            contexts.append(context)
            indices[context] = contexts.count - 1
            return contexts.count - 1
        }()
        last = number
        return number
    }

    /// `stored` as a point, its context numbered here.
    public mutating func point(of stored: StoredSample) -> StoredPoint {
        let sample = stored.sample
        let number = index(of: SampleContext(source: stored.source, device: sample.device, metadata: sample.metadata, gateway: stored.gateway))
        return StoredPoint(id: stored.id, start: sample.start, end: sample.end, value: sample.canonicalValue, context: number)
    }
}

extension StoredSample {
    /// The sample of `type` that `point` and its context make.
    public init(_ point: StoredPoint, type: SampleType, contexts: SampleContexts) {
        let context = contexts[point.context]
        self.init(
            id: point.id, source: context.source,
            sample: QuantitySample(
                stored: type, value: point.value, start: point.start, end: point.end, device: context.device,
                metadata: context.metadata),
            gateway: context.gateway)
    }
}
