import HealthUnits

/// How values of a type combine over time, as HealthKit's `HKQuantityAggregationStyle`.
public enum AggregationStyle: String, Sendable, Hashable, CaseIterable {
    /// Instantaneous readings (heart rate): averaged, with min and max.
    case discrete
    /// Amounts over an interval (energy): summed.
    case cumulative
}

/// A kind of quantity sample the store keeps: a kebab-case identifier, the canonical unit its
/// values are stored in, and its aggregation style. The catalogue is fixed in code (as
/// HealthKit's type identifiers are); every store records it in its `sampleType` table.
public struct SampleType: Sendable, Hashable, CustomStringConvertible {
    /// The stable small number that names this type inside the store's tables.
    public let storageID: Int
    /// The public name, e.g. `heart-rate`.
    public let identifier: String
    /// The unit values are stored in and shown in by default.
    public let canonicalUnit: HealthUnit
    public let aggregation: AggregationStyle
    /// One line for `hrmctl types`.
    public let summary: String

    public var description: String { identifier }

    /// Beats per minute as a strap computes it (HKQuantityTypeIdentifierHeartRate).
    public static let heartRate = SampleType(
        storageID: 1, identifier: "heart-rate", canonicalUnit: .countPerMinute, aggregation: .discrete,
        summary: "heart rate as the sensor computed it")
    /// The time between two successive heartbeats (R-R interval), one sample per beat; the
    /// sample ends at the later beat.
    public static let rrInterval = SampleType(
        storageID: 2, identifier: "rr-interval", canonicalUnit: .millisecond, aggregation: .discrete,
        summary: "time between two successive heartbeats, one sample per beat")
    /// Energy the sensor reports as expended over the sample's interval
    /// (HKQuantityTypeIdentifierActiveEnergyBurned).
    public static let activeEnergyBurned = SampleType(
        storageID: 3, identifier: "active-energy-burned", canonicalUnit: .kilojoule, aggregation: .cumulative,
        summary: "energy expended over the sample's interval, from the sensor's counter")

    /// Every type this version knows, in storage order.
    public static let all: [SampleType] = [.heartRate, .rrInterval, .activeEnergyBurned]

    /// The type with this public identifier, if any.
    public init?(identifier: String) {
        guard let known = SampleType.all.first(where: { $0.identifier == identifier }) else { return nil }
        self = known
    }

    /// The type stored under this number, if any.
    public init?(storageID: Int) {
        guard let known = SampleType.all.first(where: { $0.storageID == storageID }) else { return nil }
        self = known
    }

    private init(storageID: Int, identifier: String, canonicalUnit: HealthUnit, aggregation: AggregationStyle, summary: String) {
        self.storageID = storageID
        self.identifier = identifier
        self.canonicalUnit = canonicalUnit
        self.aggregation = aggregation
        self.summary = summary
    }

    public static func == (lhs: SampleType, rhs: SampleType) -> Bool { lhs.storageID == rhs.storageID }
    public func hash(into hasher: inout Hasher) { hasher.combine(storageID) }
}
