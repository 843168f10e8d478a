import Foundation
import HealthModel
import HealthRequests
import JSONLines
import Timestamps

/// The JSON the API answers with. A sample has the keys and order of `hrmctl samples --output
/// json`; every time is RFC 3339 UTC with milliseconds; values are in the type's canonical unit.
enum APIShapes {
    /// A sample as `hrmctl samples --output json` prints it.
    static func sample(_ record: SampleRecord) -> JSONValue { sample(record, person: nil) }

    /// The same, ending with `person` when someone wore the strap then.
    static func sample(_ record: SampleRecord, person: String?) -> JSONValue {
        .object(
            [("type", .string(record.type)), ("start", time(record.start)), ("end", time(record.end)), ("value", .number(record.value))]
                + SampleJSON.members(unit: record.unit, source: record.source, device: record.device, metadata: record.metadata)
                + (person.map { [("person", JSONValue.string($0))] } ?? []))
    }


    /// A stored sample as the live streams send it (ids are not shown), ending with `person`
    /// when given.
    static func renderedSample(_ stored: StoredSample, person: String?) -> [UInt8] {
        Array(sample(SampleRecord(stored), person: person).serialized.utf8)
    }

    static func time(_ micros: Int64) -> JSONValue { .string(RFC3339.string(from: Timestamp(microsecondsSinceEpoch: micros))) }

    static func time(_ stamp: Timestamp?) -> JSONValue { stamp.map { .string(RFC3339.string(from: $0)) } ?? .null }

    /// A number rounded to what a reader shows: hundredths.
    static func number(_ value: Double) -> JSONValue {
        value.isFinite ? .number((value * 100).rounded() / 100) : .null
    }

    static func bucket(_ bucket: StatisticsBucketValue, unit: String) -> JSONValue {
        .object([
            ("start", time(bucket.start)), ("end", time(bucket.end)), ("count", .number(Double(bucket.count))),
            ("min", number(bucket.minimum)), ("avg", number(bucket.average)), ("max", number(bucket.maximum)), ("unit", .string(unit)),
        ])
    }

    static func variability(_ variability: HeartRateVariability?) -> JSONValue {
        guard let variability else { return .null }
        return .object([
            ("beats", .number(Double(variability.beats))), ("meanNN", number(variability.meanNN)), ("sdnn", number(variability.sdnn)),
            ("rmssd", variability.rmssd.map(number) ?? .null), ("unit", .string("ms")),
        ])
    }

    static func zone(_ zone: HeartRateZones.Zone) -> JSONValue {
        .object([
            ("zone", .number(Double(zone.number))), ("lower", number(zone.lower)),
            ("upper", zone.upper.isFinite ? number(zone.upper) : .null), ("seconds", number(zone.seconds)),
            ("unit", .string("count/min")),
        ])
    }

    /// A sensor's state as the live stream and `/api/v1/sensors` give it.
    static func sensor(_ activity: SensorActivity) -> JSONValue {
        .object([
            ("device", .string(activity.identifier)), ("transport", .string(activity.transport)), ("state", .string(activity.state)),
            ("detail", .optional(activity.detail)), ("since", time(activity.since)),
            ("battery", activity.battery.map { .number(Double($0)) } ?? .null), ("lastFrame", time(activity.lastFrame)),
        ])
    }

    static func source(_ summary: SourceSummary) -> JSONValue {
        .object([
            ("name", .string(summary.source.name)), ("version", .optional(summary.source.version)),
            ("sampleCount", .number(Double(summary.sampleCount))), ("lastSample", time(summary.lastSample)),
        ])
    }

    static func device(_ summary: DeviceSummary) -> JSONValue {
        .object([
            ("identifier", .string(summary.device.localIdentifier)), ("name", .optional(summary.device.name)),
            ("sampleCount", .number(Double(summary.sampleCount))), ("lastSeen", time(summary.lastSeen)),
            ("location", .optional(summary.lastLocation?.name)),
        ])
    }
}
