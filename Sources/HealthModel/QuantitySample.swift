import HealthUnits
import Timestamps

/// One measurement: a quantity of a type over [start, end], from a device, with metadata
/// (HKQuantitySample). The source is given when saving.
public struct QuantitySample: Codable, Sendable, Hashable {
    public var type: SampleType
    public var quantity: Quantity
    public var start: Timestamp
    public var end: Timestamp
    public var device: HealthDevice?
    public var metadata: SampleMetadata
    /// For a sample made from an ANT+ heart-rate page, the beat it reports (whichever
    /// receiver heard it); nil otherwise. Kept per sample, apart from `metadata` (which the
    /// store keeps per chunk); only the anchored changes query reads it back.
    public var antBeat: ANTBeatStamp?

    /// A sample; fails when the quantity's unit does not fit the type or the interval runs
    /// backwards.
    public init(
        type: SampleType, quantity: Quantity, start: Timestamp, end: Timestamp,
        device: HealthDevice? = nil, metadata: SampleMetadata = .empty, antBeat: ANTBeatStamp? = nil
    ) throws(HealthStoreError) {
        guard type.kind == .quantity else { throw .unknownType(type.identifier) }
        guard quantity.unit == type.canonicalUnit || quantity.isCompatible(with: type.canonicalUnit) else {
            throw .incompatibleUnit(type: type.identifier, unit: quantity.unit.unitString)
        }
        guard end >= start else { throw .invalidInterval(start: start, end: end) }
        self.type = type
        self.quantity = quantity
        self.start = start
        self.end = end
        self.device = device
        self.metadata = metadata
        self.antBeat = antBeat
    }

    /// A sample read back from the store: already checked when it was saved.
    init(stored type: SampleType, value: Double, start: Timestamp, end: Timestamp, device: HealthDevice?, metadata: SampleMetadata) {
        self.type = type
        self.quantity = Quantity(unit: type.canonicalUnit, doubleValue: value)
        self.start = start
        self.end = end
        self.device = device
        self.metadata = metadata
    }

    /// The value in the type's canonical unit (what the store keeps).
    public var canonicalValue: Double {
        // The initializer checked compatibility, so this conversion cannot fail.
        (try? quantity.doubleValue(for: type.canonicalUnit)) ?? .nan
    }
}

/// A sample as stored: the sample, who wrote it, and its place in the change sequence.
public struct StoredSample: Sendable, Hashable {
    /// The sample's identity in this store, and the anchor at which it was added.
    public var id: Int64
    public var source: HealthSource
    public var sample: QuantitySample
    /// The gateway that sent the sample to the central store (docs/central-store.md); nil for
    /// a sample of a local store.
    public var gateway: String?

    public init(id: Int64, source: HealthSource, sample: QuantitySample, gateway: String? = nil) {
        self.id = id
        self.source = source
        self.sample = sample
        self.gateway = gateway
    }
}
