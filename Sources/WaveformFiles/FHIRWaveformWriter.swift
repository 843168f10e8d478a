import JSONLines
import Timestamps

/// Writes a strip as one FHIR R4 `Observation` (JSON) whose values are `SampledData`: the whole
/// strip as one series from its first sample to its last, a gap's positions as `E`.
///
/// - ECG: category `procedure`, code MDC 131328 `MDC_ECG_ELEC_POTL` (ISO/IEEE 11073-10101,
///   system `urn:oid:2.16.840.1.113883.6.24`), the code FHIR's own R4 ECG example uses for
///   the ECG waveform; the samples in `valueSampledData`, origin 0 µV (UCUM `uV`).
/// - Acceleration: no standard code for raw three-axis acceleration is known to this writer, so
///   the code and each axis's code are text only; one `component` per axis (X, Y, Z) with its
///   own `valueSampledData`, origin 0 milli-g (UCUM `m[g]`: `[g]`, the standard acceleration of
///   free fall, is a metric unit in UCUM and takes the prefix `m`).
/// - SampledData: `period` 1000 / frequency milliseconds, `factor` 1, `dimensions` 1, `data`
///   the samples as integers separated by single spaces. A segment starts at the position
///   nearest its start (a segment that would land on the previous one's last position takes the
///   next), so its times are off by at most half a period (less than one in that case).
/// - `effectivePeriod`: the first sample's time to the last's (UTC, to the microsecond); the
///   first sample is at the start. `identifier` holds the recording's id, `device` the device
///   (its id as identifier and display), `subject` the person's name as display when known.
public struct FHIRWaveformWriter: Sendable {
    public init() {}

    /// MDC's code system (ISO/IEEE 11073-10101) as an OID URI.
    public static let mdcSystem = "urn:oid:2.16.840.1.113883.6.24"
    /// UCUM's code system.
    public static let ucumSystem = "http://unitsofmeasure.org"

    /// The Observation as JSON text, with a final newline.
    /// - Throws: ``WaveformFileError/seriesTooLong(instants:limit:)`` when the gaps would make
    ///   the series longer than 2³¹ − 1 instants.
    public func write(_ strip: WaveformStrip) throws(WaveformFileError) -> String {
        JSONValue.object(try observation(strip)).serialized + "\n"
    }

    /// The Observation's members, for a caller to put it in a Bundle or add to it.
    public func observation(_ strip: WaveformStrip) throws(WaveformFileError) -> [(String, JSONValue)] {
        let grid = try SampleGrid(strip)
        let data = Self.data(strip, grid: grid)
        var members: [(String, JSONValue)] = [
            ("resourceType", .string("Observation")),
            ("identifier", .array([.object([("value", .string(strip.recordingID))])])),
            ("status", .string("final")),
        ]
        switch strip.kind {
        case .ecg:
            members.append(("category", Self.category("procedure", "Procedure")))
            members.append(("code", .object([
                ("coding", .array([.object([
                    ("system", .string(Self.mdcSystem)), ("code", .string("131328")), ("display", .string("MDC_ECG_ELEC_POTL")),
                ])])),
                ("text", .string("ECG")),
            ])))
        case .acceleration:
            members.append(("code", .object([("text", .string("Acceleration, three axes"))])))
        }
        if let person = strip.personName { members.append(("subject", .object([("display", .string(person))]))) }
        members.append(("effectivePeriod", .object([
            ("start", .string(Self.time(strip.firstInstantNanoseconds))), ("end", .string(Self.time(strip.lastInstantNanoseconds))),
        ])))
        members.append(("device", .object([
            ("identifier", .object([("value", .string(strip.deviceID))])), ("display", .string(strip.deviceID)),
        ])))
        switch strip.kind {
        case .ecg:
            members.append(("valueSampledData", Self.sampledData(strip, data: data[0])))
        case .acceleration:
            let components = zip(strip.kind.channelNames, data).map { axis, series in
                JSONValue.object([
                    ("code", .object([("text", .string("Acceleration, \(axis) axis"))])),
                    ("valueSampledData", Self.sampledData(strip, data: series)),
                ])
            }
            members.append(("component", .array(components)))
        }
        return members
    }

    /// Each channel's `data`: its samples in order, `E` at each gap position.
    static func data(_ strip: WaveformStrip, grid: SampleGrid) -> [String] {
        var series = [[UInt8]](repeating: [], count: strip.channelCount)
        grid.forEachInstant(of: strip) { samples in
            for channel in series.indices {
                if !series[channel].isEmpty { series[channel].append(UInt8(ascii: " ")) }
                if let samples {
                    series[channel] += String(samples[samples.startIndex + channel]).utf8
                } else {
                    series[channel].append(UInt8(ascii: "E"))
                }
            }
        }
        return series.map { String(decoding: $0, as: UTF8.self) }
    }

    static func sampledData(_ strip: WaveformStrip, data: String) -> JSONValue {
        .object([
            ("origin", origin(strip.kind)),
            ("period", .number(1000 / strip.frequency)),
            ("factor", .integer(1)),
            ("dimensions", .integer(1)),
            ("data", .string(data)),
        ])
    }

    /// Zero of the kind's unit, in UCUM.
    static func origin(_ kind: WaveformKind) -> JSONValue {
        let (unit, code) = switch kind {
        case .ecg: ("µV", "uV")
        case .acceleration: ("milli-g", "m[g]")
        }
        return .object([("value", .integer(0)), ("unit", .string(unit)), ("system", .string(ucumSystem)), ("code", .string(code))])
    }

    /// An observation category of HL7's code system.
    static func category(_ code: String, _ display: String) -> JSONValue {
        .array([.object([
            ("coding", .array([.object([
                ("system", .string("http://terminology.hl7.org/CodeSystem/observation-category")),
                ("code", .string(code)), ("display", .string(display)),
            ])])),
            ("text", .string(display)),
        ])])
    }

    /// RFC 3339 in UTC to the nearest microsecond.
    static func time(_ nanoseconds: Int64) -> String {
        RFC3339.string(from: WaveformStrip.timestamp(nearest: nanoseconds), fractionDigits: 6)
    }
}
