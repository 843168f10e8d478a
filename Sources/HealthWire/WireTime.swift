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

    /// The range [since, until) a call names, nil where unbounded; a reversed range is an error.
    public static func range(since: Int64, until: Int64) throws(WireError) -> (since: Timestamp?, until: Timestamp?) {
        guard since <= until else {
            throw WireError("the range is reversed: since (\(since)) is after until (\(until)); times are microseconds since the epoch")
        }
        return (
            since == noLowerBound ? nil : Timestamp(microsecondsSinceEpoch: since),
            until == noUpperBound ? nil : Timestamp(microsecondsSinceEpoch: until)
        )
    }
}
