import HealthModel
import Timestamps

/// Times on the bus: microseconds since the Unix epoch; the extremes of Int64 mean "no bound".
public enum WireTime {
    /// `since` with no lower bound.
    public static let noLowerBound = Int64.min
    /// `until` with no upper bound.
    public static let noUpperBound = Int64.max

    /// The bus value of an optional lower bound.
    public static func since(_ time: Timestamp?) -> Int64 { time?.microsecondsSinceEpoch ?? noLowerBound }
    /// The bus value of an optional upper bound.
    public static func until(_ time: Timestamp?) -> Int64 { time?.microsecondsSinceEpoch ?? noUpperBound }

    /// The earliest time a call may name: 0001-01-01T00:00:00Z.
    public static let earliest: Int64 = -62_135_596_800_000_000
    /// The latest: 9999-12-31T23:59:59.999999Z.
    public static let latest: Int64 = 253_402_300_799_999_999

    /// Checks that `time` lies between ``earliest`` and ``latest``.
    public static func check(_ time: Int64, _ what: String) throws(WireError) {
        guard (earliest...latest).contains(time) else {
            throw WireError("\(what) \(time) is outside the years 0001 to 9999 (times are microseconds since the epoch)")
        }
    }

    /// The range [since, until) a call names, nil where unbounded; a reversed range, or a
    /// bound outside the years 0001 to 9999 other than the two "no bound" extremes, is an error.
    public static func range(since: Int64, until: Int64) throws(WireError) -> (since: Timestamp?, until: Timestamp?) {
        if since != noLowerBound { try check(since, "since") }
        if until != noUpperBound { try check(until, "until") }
        guard since <= until else {
            throw WireError("the range is reversed: since (\(since)) is after until (\(until)); times are microseconds since the epoch")
        }
        return (
            since == noLowerBound ? nil : Timestamp(microsecondsSinceEpoch: since),
            until == noUpperBound ? nil : Timestamp(microsecondsSinceEpoch: until)
        )
    }
}
