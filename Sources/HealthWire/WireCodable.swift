import HealthModel
import HealthRequests
import SDBus
import Timestamps

/// A value with its own D-Bus coding: the request coder uses it in place of the value's
/// Codable form wherever the value appears in a request or an answer.
public protocol WireCodable: Sendable {
    /// The value's D-Bus signature.
    static var wireSignature: String { get }
    /// The value as it travels.
    var wireValue: DBusValue { get }
    /// The value a D-Bus value describes; `index` is its place in an array, for messages.
    static func fromWire(_ value: DBusValue, index: Int?) throws(WireError) -> Self
    /// Checks how many of these one array may carry, before any is decoded.
    static func checkWireCount(_ count: Int) throws(WireError)
}

extension SampleRecord: WireCodable {
    public static let wireSignature = "a{sv}"
    public static func fromWire(_ value: DBusValue, index: Int?) throws(WireError) -> SampleRecord { try SampleRecord(wire: value) }
}

extension QuantitySample: WireCodable {
    public static let wireSignature = "a{sv}"
    public var wireValue: DBusValue { SampleSubmission.wireValue(self) }
    public static func fromWire(_ value: DBusValue, index: Int?) throws(WireError) -> QuantitySample {
        try SampleSubmission.sample(from: value, index: index ?? 0)
    }

    /// Samples travel only in saves, which take at most ``RequestBudgets/samplesPerSave``.
    public static func checkWireCount(_ count: Int) throws(WireError) {
        do { try SaveSamples.checkCount(count) } catch { throw WireError(error.message) }
    }
}

extension DeletedSample: WireCodable {
    /// The wire does not carry the type: the request names it, and the client sets it
    /// (``withType(_:)``); until then it is heart rate.
    public static func fromWire(_ value: DBusValue, index: Int?) throws(WireError) -> DeletedSample {
        try DeletedSample(wire: value, type: .heartRate)
    }

    /// The deletion with the type of the request that reported it.
    public func withType(_ type: SampleType) -> DeletedSample {
        var deletion = self
        deletion.type = type
        return deletion
    }
}

extension StatisticsBucketValue: WireCodable {
    public static func fromWire(_ value: DBusValue, index: Int?) throws(WireError) -> StatisticsBucketValue {
        try StatisticsBucketValue(wire: value)
    }
}

extension HeartRateZones.Zone: WireCodable {
    public static func fromWire(_ value: DBusValue, index: Int?) throws(WireError) -> HeartRateZones.Zone { try HeartRateZones.Zone(wire: value) }
}

extension HeartRateVariability: WireCodable {
    public static let wireSignature = "a{sv}"
    /// A variability that is there; an absent one travels as the empty dictionary and is read
    /// as nil before this is asked (the request coder's optional values).
    public static func fromWire(_ value: DBusValue, index: Int?) throws(WireError) -> HeartRateVariability {
        guard let variability = try fromWire(value) else { throw WireError("variability: no beats") }
        return variability
    }
}

extension AuthorizationAccessEntry: WireCodable {
    public static func fromWire(_ value: DBusValue, index: Int?) throws(WireError) -> AuthorizationAccessEntry {
        try AuthorizationAccessEntry(wire: value)
    }
}

extension DeviceSummary: WireCodable {
    public static let wireSignature = "a{sv}"
    public static func fromWire(_ value: DBusValue, index: Int?) throws(WireError) -> DeviceSummary { try DeviceSummary(wire: value) }
}

extension SensorActivity: WireCodable {
    public static let wireSignature = "a{sv}"
    public static func fromWire(_ value: DBusValue, index: Int?) throws(WireError) -> SensorActivity { try SensorActivity(wire: value) }
}

extension SourceSummary: WireCodable {
    public static let wireSignature = "a{sv}"
    public static func fromWire(_ value: DBusValue, index: Int?) throws(WireError) -> SourceSummary { try SourceSummary(wire: value) }
}

extension RecordingImportSummary: WireCodable {
    public static let wireSignature = "a{sv}"
    public static func fromWire(_ value: DBusValue, index: Int?) throws(WireError) -> RecordingImportSummary {
        try RecordingImportSummary(wire: value)
    }
}

extension Person: WireOptions {}

extension StrapAssignment: WireOptions {}

extension Workout: WireOptions {}

extension HealthEvent: WireOptions {}

extension WorkoutSummary: WireOptions {}

extension WorkoutSummary.Lap: WireOptions {}

extension WorkoutSummary.HeartRateFigures: WireOptions {}

extension WorkoutPoint: WireCodable {
    /// `(time, value)`: microseconds since the epoch and count/min.
    public static let wireSignature = "(xd)"

    public var wireValue: DBusValue { .structure([.int64(time.microsecondsSinceEpoch), .double(value)]) }

    public static func fromWire(_ value: DBusValue, index: Int?) throws(WireError) -> WorkoutPoint {
        guard case .structure(let fields) = value.unwrapped, fields.count == 2, case .int64(let time) = fields[0].unwrapped,
              case .double(let number) = fields[1].unwrapped
        else { throw WireError("a workout point is not \(wireSignature)") }
        return WorkoutPoint(time: Timestamp(microsecondsSinceEpoch: time), value: number)
    }
}

extension WaveformRecording: WireOptions {}

extension WaveformSegment: WireCodable {
    /// `(start, values)`: microseconds since the epoch, and the values interleaved by instant.
    public static let wireSignature = "(xai)"

    public var wireValue: DBusValue {
        .structure([.int64(start.microsecondsSinceEpoch), .array(element: "i", values.map(DBusValue.int32))])
    }

    public static func fromWire(_ value: DBusValue, index: Int?) throws(WireError) -> WaveformSegment {
        guard case .structure(let fields) = value.unwrapped, fields.count == 2, case .int64(let start) = fields[0].unwrapped,
            case .array(_, let items) = fields[1].unwrapped
        else { throw WireError("a waveform segment is not \(wireSignature)") }
        var values: [Int32] = []
        values.reserveCapacity(items.count)
        for item in items {
            guard case .int32(let number) = item.unwrapped else { throw WireError("a waveform segment's values are not i") }
            values.append(number)
        }
        return WaveformSegment(start: Timestamp(microsecondsSinceEpoch: start), values: values)
    }

    /// One answer carries at most ``WaveformLimits/instantsPerAnswer`` instants, so no more
    /// segments than that.
    public static func checkWireCount(_ count: Int) throws(WireError) {
        guard count <= WaveformLimits.instantsPerAnswer else { throw WireError("more than \(WaveformLimits.instantsPerAnswer) waveform segments") }
    }
}
