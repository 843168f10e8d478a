import Foundation

/// What one `save` did with each sample.
public struct SaveReport: Sendable, Equatable {
    /// Samples added to the store.
    public var stored = 0
    /// Samples whose identity (or sync identifier at the same or a higher version) was
    /// already stored: nothing changed.
    public var unchanged = 0
    /// Stored samples replaced by a higher sync version.
    public var replaced = 0
    /// Samples not saved because the source lacks share authorization, by type.
    public var denied: [SampleType: Int] = [:]
    /// The share status each type of the batch had inside the write transaction.
    public var authorization: [SampleType: AuthorizationStatus] = [:]

    public init() {}

    /// All samples not saved for lack of authorization.
    public var deniedCount: Int { denied.values.reduce(0, +) }
}

/// What `save` does with samples of a type the source may not share.
public enum SavePolicy: Sendable, Hashable {
    /// Saves the rest and counts them in `SaveReport.denied`; a type never asked for is
    /// recorded as a `notDetermined` request (the recording daemon's way).
    case skipUnauthorized
    /// Saves nothing and throws `HealthStoreError.shareNotAuthorized`; records no request
    /// (a program's batch is all or nothing, as HealthKit's save).
    case refuseUnauthorized
}
