import HealthUnits

/// How values of a type combine over time, as HealthKit's `HKQuantityAggregationStyle`.
public enum AggregationStyle: String, Sendable, Hashable, CaseIterable {
    /// Instantaneous readings (heart rate): averaged, with min and max.
    case discrete
    /// Amounts over an interval (energy): summed.
    case cumulative
}

/// What a sample of a type is: a quantity (HealthKit's `HKQuantityType`), a workout
/// (`HKWorkoutType`), an event (`HKCategoryType`: a time with no quantity, ``HealthEvent``) or
/// a waveform (`HKElectrocardiogram`'s voltages: a recording of integers at a fixed rate,
/// ``WaveformRecording``). Every type, whatever its kind, is authorized the same way; events
/// are written by hrmd alone.
public enum SampleKind: String, Sendable, Hashable {
    case quantity
    case workout
    case category
    case waveform
}

/// A kind of sample the store keeps and authorizes: a kebab-case identifier, its kind, the
/// canonical unit its values are stored in, and its aggregation style (a workout's are its
/// duration's: seconds, summed). The catalogue is fixed in code (as
/// HealthKit's type identifiers are); every store records it in its `sampleType` table.
///
/// A value holds only its storage number and reads the rest from the catalogue, so copying
/// one (once per sample read) costs nothing.
public struct SampleType: Sendable, Hashable, CustomStringConvertible {
    /// The stable small number that names this type inside the store's tables.
    public let storageID: Int

    /// What the catalogue says of one type.
    private struct Entry: Sendable {
        var identifier: String
        var kind: SampleKind = .quantity
        var canonicalUnit: HealthUnit
        var aggregation: AggregationStyle
        /// A figure hrmd works out from other samples (written by hrmd alone).
        var derived = false
        /// A waveform's channels, in the order its samples interleave them.
        var channels: [String] = []
        var summary: String
    }

    /// The catalogue, in storage order from 1.
    private static let catalogue: [Entry] = [
        Entry(identifier: "heart-rate", canonicalUnit: .countPerMinute, aggregation: .discrete,
              summary: "heart rate as the sensor computed it"),
        Entry(identifier: "rr-interval", canonicalUnit: .millisecond, aggregation: .discrete,
              summary: "time between two successive heartbeats, one sample per beat"),
        Entry(identifier: "active-energy-burned", canonicalUnit: .kilojoule, aggregation: .cumulative,
              summary: "energy expended over the sample's interval, from the sensor's counter"),
        Entry(identifier: "workout", kind: .workout, canonicalUnit: .second, aggregation: .cumulative,
              summary: "a workout: its activity, start, end and events (hrmctl workout)"),
        Entry(identifier: "high-heart-rate-event", kind: .category, canonicalUnit: .second, aggregation: .cumulative,
              summary: "heart rate above the alert threshold for the alert's time, outside workouts (hrmctl events)"),
        Entry(identifier: "low-heart-rate-event", kind: .category, canonicalUnit: .second, aggregation: .cumulative,
              summary: "heart rate below the alert threshold for the alert's time, outside workouts (hrmctl events)"),
        Entry(identifier: "sensor-contact-lost", kind: .category, canonicalUnit: .second, aggregation: .cumulative,
              summary: "a connected strap reporting no skin contact for the alert's time (hrmctl events)"),
        Entry(identifier: "strap-battery-low", kind: .category, canonicalUnit: .second, aggregation: .cumulative,
              summary: "a strap's battery under the alert's percentage (hrmctl events)"),
        Entry(identifier: "resting-heart-rate", canonicalUnit: .countPerMinute, aggregation: .discrete, derived: true,
              summary: "a person's (or strap's) resting heart rate of one local day, by hrmd at the day's end"),
        Entry(identifier: "heart-rate-recovery-one-minute", canonicalUnit: .countPerMinute, aggregation: .discrete, derived: true,
              summary: "how far the heart rate fell in the minute after a workout ended, by hrmd"),
        Entry(identifier: "heart-rate-variability-sdnn", canonicalUnit: .millisecond, aggregation: .discrete, derived: true,
              summary: "standard deviation of the RR intervals over 5 minutes, by hrmd"),
        Entry(identifier: "strap-disconnected", kind: .category, canonicalUnit: .second, aggregation: .cumulative,
              summary: "a strap's link down for the alert's time, until it is heard again (hrmctl events)"),
        Entry(identifier: "electrocardiogram", kind: .waveform, canonicalUnit: .microvolt, aggregation: .discrete,
              channels: ["ecg"], summary: "a strap's ECG, µV at the strap's rate (Polar H10: 130 Hz) (hrmctl ecg)"),
        Entry(identifier: "acceleration", kind: .waveform, canonicalUnit: .milliG, aggregation: .discrete,
              channels: ["x", "y", "z"], summary: "a strap's acceleration on three axes, mG at the strap's rate (hrmctl ecg)"),
    ]

    private var entry: Entry { Self.catalogue[storageID - 1] }

    /// The public name, e.g. `heart-rate`.
    public var identifier: String { entry.identifier }
    /// The unit values are stored in and shown in by default.
    public var kind: SampleKind { entry.kind }
    public var canonicalUnit: HealthUnit { entry.canonicalUnit }
    public var aggregation: AggregationStyle { entry.aggregation }
    /// Whether hrmd works the samples of this type out from others (a figure such as the
    /// resting heart rate): no other source writes them.
    public var isDerived: Bool { entry.derived }
    /// One line for `hrmctl types`.
    public var summary: String { entry.summary }
    /// A waveform's channels in the order its samples interleave them (`ecg`; `x`, `y`, `z`);
    /// empty for the other kinds.
    public var channels: [String] { entry.channels }

    public var description: String { identifier }

    /// Beats per minute as a strap computes it (HKQuantityTypeIdentifierHeartRate).
    public static let heartRate = SampleType(catalogued: 1)
    /// The time between two successive heartbeats (R-R interval), one sample per beat; the
    /// sample ends at the later beat.
    public static let rrInterval = SampleType(catalogued: 2)
    /// Energy the sensor reports as expended over the sample's interval
    /// (HKQuantityTypeIdentifierActiveEnergyBurned).
    public static let activeEnergyBurned = SampleType(catalogued: 3)

    /// Workouts (HKWorkoutType): authorized as any type, stored apart from quantities.
    public static let workout = SampleType(catalogued: 4)

    /// Heart rate above a threshold for a time (HKCategoryTypeIdentifierHighHeartRateEvent).
    public static let highHeartRateEvent = SampleType(catalogued: 5)
    /// Heart rate below a threshold for a time (HKCategoryTypeIdentifierLowHeartRateEvent).
    public static let lowHeartRateEvent = SampleType(catalogued: 6)
    /// A strap worn loose or taken off while connected: no skin contact for a time.
    public static let sensorContactLost = SampleType(catalogued: 7)
    /// A strap's battery under a percentage, until it is charged or changed.
    public static let strapBatteryLow = SampleType(catalogued: 8)

    /// The resting heart rate of one local day (HKQuantityTypeIdentifierRestingHeartRate): the
    /// lowest sustained level outside workouts (docs/figures.md).
    public static let restingHeartRate = SampleType(catalogued: 9)
    /// How far the heart rate fell in the minute after a workout ended
    /// (HKQuantityTypeIdentifierHeartRateRecoveryOneMinute).
    public static let heartRateRecoveryOneMinute = SampleType(catalogued: 10)
    /// The standard deviation of the normal RR intervals over a 5-minute window
    /// (HKQuantityTypeIdentifierHeartRateVariabilitySDNN).
    public static let heartRateVariabilitySDNN = SampleType(catalogued: 11)
    /// A strap's link down for a time: it did not come back within its backoff.
    public static let strapDisconnected = SampleType(catalogued: 12)

    /// A strap's electrocardiogram: one channel of µV (HKElectrocardiogram's voltages).
    public static let electrocardiogram = SampleType(catalogued: 13)
    /// A strap's acceleration: three channels (x, y, z) of mG.
    public static let acceleration = SampleType(catalogued: 14)

    /// Every type this version knows, in storage order.
    public static let all: [SampleType] = catalogue.indices.map { SampleType(catalogued: $0 + 1) }
    /// The types whose samples are quantities (what sample queries and saves take).
    public static let quantityTypes: [SampleType] = all.filter { $0.kind == .quantity }
    /// The event types (``HealthEvent``): written by hrmd alone.
    public static let eventTypes: [SampleType] = all.filter { $0.kind == .category }
    /// The quantity types hrmd works out from the readings (resting heart rate, recovery, SDNN):
    /// written by hrmd alone.
    public static let figureTypes: [SampleType] = all.filter(\.isDerived)
    /// The waveform types (``WaveformRecording``): the electrocardiogram and acceleration.
    public static let waveformTypes: [SampleType] = all.filter { $0.kind == .waveform }

    /// The type with this public identifier, if any.
    public init?(identifier: String) {
        guard let index = Self.catalogue.firstIndex(where: { $0.identifier == identifier }) else { return nil }
        self.init(catalogued: index + 1)
    }

    /// The type stored under this number, if any.
    public init?(storageID: Int) {
        guard Self.catalogue.indices.contains(storageID - 1) else { return nil }
        self.init(catalogued: storageID)
    }

    private init(catalogued storageID: Int) {
        self.storageID = storageID
    }
}

extension SampleType: Codable {
    /// A type travels as its identifier (`heartRate`).
    public init(from decoder: any Decoder) throws {
        let identifier = try decoder.singleValueContainer().decode(String.self)
        guard let type = SampleType(identifier: identifier) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "unknown type \(identifier)"))
        }
        self = type
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(identifier)
    }
}
