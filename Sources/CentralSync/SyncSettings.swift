import Secrets

/// What the sync needs to run, from `[sync]`: where, as which gateway, how much at once.
public struct SyncSettings: Sendable {
    /// The libpq connection string; never printed (it may name a host and user, and people
    /// paste passwords into such strings).
    public var connectionString: Secret
    public var gateway: String
    /// Samples per batch at most: a gateway catching up sends batches of this size. Large
    /// enough that each device's chunk is written whole in one or two batches while catching
    /// up: every append to a chunk writes its arrays again (a new TOAST version), so batches of
    /// 2000 across 20 straps (100 samples each) wrote each 1024-sample chunk about ten times and
    /// left a central store twice its compact size after VACUUM (docs/benchmarks.md, bench-central).
    public var batchSize: Int
    /// How long a connect or a statement may take before the connection counts as lost
    /// (a server or network that stops answering without closing).
    public var timeout: Duration
    /// The longest pause between attempts after failures.
    public var retryMaximum: Duration
    /// The pause after a full batch while catching up: it bounds the catch-up rate so that
    /// recording keeps the store's writer and the processor first.
    public var catchUpPause: Duration

    public init(
        connectionString: Secret, gateway: String, batchSize: Int = 20000, timeout: Duration = .seconds(15),
        retryMaximum: Duration = .seconds(60), catchUpPause: Duration = .milliseconds(20)
    ) {
        self.connectionString = connectionString
        self.gateway = gateway
        self.batchSize = batchSize
        self.timeout = timeout
        self.retryMaximum = retryMaximum
        self.catchUpPause = catchUpPause
    }
}
