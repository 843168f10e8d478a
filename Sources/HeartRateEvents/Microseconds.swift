import Timestamps

/// Whole microseconds of durations and between times, saturating instead of overflowing: the
/// detector's arithmetic on times it is given, which may be anything.
enum Microseconds {
    /// The microseconds of `duration`, rounded towards zero; `Int64.min` or `.max` beyond them.
    static func of(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000)
        if overflow { return seconds < 0 ? .min : .max }
        let (sum, overflowSum) = whole.addingReportingOverflow(attoseconds / 1_000_000_000_000)
        if overflowSum { return whole < 0 ? .min : .max }
        return sum
    }

    /// `later − earlier` in microseconds; `Int64.min` or `.max` beyond them.
    static func from(_ earlier: Timestamp, to later: Timestamp) -> Int64 {
        let (difference, overflow) = later.microsecondsSinceEpoch.subtractingReportingOverflow(earlier.microsecondsSinceEpoch)
        if overflow { return later > earlier ? .max : .min }
        return difference
    }
}
