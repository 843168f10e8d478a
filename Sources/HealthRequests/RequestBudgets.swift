import HealthModel
import Timestamps

/// The budgets every front applies to requests: past them a request is refused with a
/// one-line reason, never served in part.
public enum RequestBudgets {
    /// Samples one save takes.
    public static let samplesPerSave = 10_000
    /// Samples (or change events) one query or changes request returns.
    public static let samplesPerQuery = 10_000
    /// Types one authorization request names.
    public static let typesPerRequest = 64
    /// Application names one user may have authorization records for (requests or answers).
    public static let applicationsPerUser = 64
    /// Sources with authorization records in all: a bound on what `Authorizations` lists.
    public static let sources = 8192
    /// Bytes of one string argument (an application, type, source, bucket or time zone name)
    /// at most; strings inside samples have their own bounds.
    public static let stringArgumentBytes = 512
}

extension WireTime {
    /// The range [since, until) a request names, checked.
    static func checked(since: Int64, until: Int64) throws(RequestFailure) -> (since: Timestamp?, until: Timestamp?) {
        do { return try range(since: since, until: until) } catch { throw error.failure }
    }
}

extension RequestBudgets {
    /// The samples (or change events) a query asks for: 0 is the most one request returns,
    /// more than that is refused.
    static func queryLimit(_ asked: UInt32) throws(RequestFailure) -> Int {
        let asked = Int(asked)
        guard asked <= samplesPerQuery else {
            throw .invalidArguments(
                "limit \(asked) is over the most one call returns (\(samplesPerQuery)); page with the range or the anchor, or use QuerySamplesToFile")
        }
        return asked == 0 ? samplesPerQuery : asked
    }
}
