import Foundation
import JSONLines
import SensorFrames
import Timestamps

/// The hrmd-trace format, version 1 (README, "Recording and replay"): UTF-8 JSON Lines; a header line
/// `{"format":"hrmd-trace","version":1,…}`, then one event per line with `t`, `transport`,
/// `device`, `kind`, and for data frames `characteristic` and `value` (lowercase hex).
/// Unknown keys and kinds are kept out of the way: a reader ignores them.
public enum TraceLine {
    public static let formatName = "hrmd-trace"
    public static let version = 1

    /// The header line, with free-form details (such as the recording host and hrmd version).
    public static func header(details: [(String, String)] = []) -> String {
        JSONValue.object(
            [("format", .string(formatName)), ("version", .number(Double(version)))]
                + details.map { ($0.0, .string($0.1)) }
        ).serialized
    }

    /// One frame as an event line (times with microseconds).
    public static func encode(_ frame: SensorFrame) -> String {
        var members: [(String, JSONValue)] = [
            ("t", .string(RFC3339.string(from: frame.time, fractionDigits: 6))),
            ("transport", .string(frame.transport.rawValue)),
            ("device", .string(frame.device.rawValue)),
            ("kind", .string(frame.kind.name)),
        ]
        if let characteristic = frame.characteristic { members.append(("characteristic", .string(characteristic.description))) }
        // A data frame carries its value, even an empty one (the decoder requires it).
        let isData = frame.kind == .notify || frame.kind == .read
        if isData || !frame.value.isEmpty || frame.characteristic != nil {
            members.append(("value", .string(HexBytes.string(frame.value))))
        }
        return JSONValue.object(members).serialized
    }

    /// Checks that `line` is a version 1 header.
    public static func decodeHeader(_ line: some StringProtocol) throws(TraceError) {
        guard let object = jsonObject(line), object["format"] as? String == formatName else { throw .notATrace }
        guard let version = object["version"] as? Int else { throw .missingKey("version") }
        guard version == Self.version else { throw .unsupportedVersion(version) }
    }

    /// Whether `bytes` look like the start of an hrmd trace (to tell traces from FIT files).
    public static func looksLikeTrace(_ prefix: [UInt8]) -> Bool {
        let text = String(decoding: prefix.prefix(200), as: UTF8.self)
        return text.hasPrefix("{") && text.contains("\"\(formatName)\"")
    }

    /// The frame an event line holds.
    public static func decode(_ line: some StringProtocol) throws(TraceError) -> SensorFrame {
        var decoder = TraceDecoder()
        var text = String(line)
        let result = text.withUTF8 { bytes in
            Result { () throws(TraceError) in try decoder.decode(utf8: bytes) }
        }
        return try result.get()
    }

    private static func jsonObject(_ line: some StringProtocol) -> [String: Any]? {
        try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
    }
}
