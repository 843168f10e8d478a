import HealthModel
import JSONLines
import Timestamps

/// A waveform recording's JSON shape, the one every front writes (`hrmctl ecg list --output
/// json`): id, type, device (when known), source, start, end (one sample period after the last
/// sample), frequency (Hz), channels, instants, and `open` while it is being recorded.
public enum WaveformJSON {
    public static func object(_ recording: WaveformRecording) -> JSONValue {
        var members: [(String, JSONValue)] = [("id", .string(recording.id)), ("type", .string(recording.type.identifier))]
        if let device = recording.device { members.append(("device", .string(device))) }
        members += [
            ("source", .string(recording.source)), ("start", .string(RFC3339.string(from: recording.start))),
            ("end", .string(RFC3339.string(from: recording.end))), ("frequency", .number(recording.frequency)),
            ("unit", .string(recording.type.canonicalUnit.unitString)),
            ("channels", .array(recording.channels.map(JSONValue.string))), ("instants", .integer(Int64(recording.instantCount))),
            ("open", .bool(recording.isOpen)),
        ]
        return .object(members)
    }

    /// A rate as people write it: `130`, `52.5`.
    public static func number(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
    }
}

extension WaveformJSON {
    /// A segment: its first instant's time and its values interleaved by instant.
    public static func object(_ segment: WaveformSegment) -> JSONValue {
        .object([
            ("start", .string(RFC3339.string(from: segment.start))),
            ("values", .array(segment.values.map { .integer(Int64($0)) })),
        ])
    }
}
