import Timestamps

/// Writes a strip as CSV (RFC 4180, `\n` line ends): a header line, then one line per instant
/// with its time and one column per channel, `time,ecg_uv` or `time,x_mg,y_mg,z_mg`. The time
/// is RFC 3339 in UTC to the microsecond (`2026-11-20T10:00:00.007692Z`), as hrmd prints times
/// elsewhere, rounded to the nearest microsecond; the values are the samples as integers. Gaps
/// have no lines.
public struct WaveformCSVWriter: Sendable {
    public init() {}

    /// The columns' names, in order.
    public static func columns(_ kind: WaveformKind) -> [String] {
        ["time"] + kind.channelNames.map { $0.lowercased() + "_" + kind.unit.lowercased() }
    }

    /// The whole file.
    public func write(_ strip: WaveformStrip) -> String {
        var bytes = Array((Self.columns(strip.kind).joined(separator: ",") + "\n").utf8)
        let channels = strip.channelCount
        bytes.reserveCapacity(bytes.count + strip.instantCount * (29 + 8 * channels))
        for segment in strip.segments {
            for instant in 0..<strip.instantCount(of: segment) {
                let time = WaveformStrip.timestamp(nearest: strip.time(ofInstant: instant, in: segment))
                RFC3339.append(time, fractionDigits: 6, to: &bytes)
                for channel in 0..<channels {
                    bytes.append(UInt8(ascii: ","))
                    bytes += String(segment.samples[instant * channels + channel]).utf8
                }
                bytes.append(UInt8(ascii: "\n"))
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
