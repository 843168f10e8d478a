/// Writes many times as `RFC3339.append(_:fractionDigits:)` does with milliseconds
/// (`2026-11-20T10:00:00.123Z`), formatting the date and hour once for the times of one UTC
/// hour: what printing a week of samples spends most of its time on.
public struct RFC3339MillisecondWriter {
    /// The longest text a time makes: a year of up to 19 digits and a sign, and the rest.
    public static let maximumLength = 48

    /// The hour (since the epoch) whose `YYYY-MM-DDTHH` is in `prefix`.
    private var hour: Int64 = .min
    private var prefix: [UInt8] = []

    public init() {}

    /// Writes `time` at `destination`, which has room for `maximumLength` bytes; returns the
    /// number of bytes written.
    @inline(__always)
    public mutating func write(_ time: Timestamp, to destination: UnsafeMutablePointer<UInt8>) -> Int {
        let micros = time.microsecondsSinceEpoch
        let hour = RFC3339.floorDiv(micros, 3_600_000_000)
        if hour != self.hour { setHour(hour, of: time) }
        let withinHour = micros &- hour &* 3_600_000_000
        let milliseconds = withinHour / 1000
        let minute = milliseconds / 60_000
        let second = milliseconds / 1000 % 60
        let fraction = milliseconds % 1000
        let count = prefix.count
        prefix.withUnsafeBufferPointer { destination.update(from: $0.baseAddress!, count: count) }
        var at = destination + count
        at[0] = UInt8(ascii: ":")
        Self.twoDigits(minute, at + 1)
        at[3] = UInt8(ascii: ":")
        Self.twoDigits(second, at + 4)
        at[6] = UInt8(ascii: ".")
        at[7] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: fraction / 100)
        Self.twoDigits(fraction % 100, at + 8)
        at[10] = UInt8(ascii: "Z")
        at += 11
        return count + 11
    }

    /// Formats the hour's `YYYY-MM-DDTHH` the way `RFC3339.append` does.
    private mutating func setHour(_ hour: Int64, of time: Timestamp) {
        var text: [UInt8] = []
        RFC3339.append(time, fractionDigits: 0, to: &text)
        // `…THH:MM:SSZ` less `:MM:SSZ`.
        prefix = Array(text.dropLast(7))
        self.hour = hour
    }

    @inline(__always)
    private static func twoDigits(_ value: Int64, _ at: UnsafeMutablePointer<UInt8>) {
        at[0] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: value / 10)
        at[1] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: value % 10)
    }
}
