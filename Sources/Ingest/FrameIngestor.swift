import HealthModel
import HealthStore
import Logging
import SensorFrames

/// The synchronous heart of ingest, shared by the live pipeline and replays: frames in,
/// typed samples through the stored-sample policy, authorized batched writes out. A write
/// that fails keeps its samples for the next flush, so nothing accepted is lost while the
/// store is briefly unavailable.
public struct FrameIngestor {
    public let settings: IngestSettings
    public private(set) var counters = IngestCounters()
    private let store: HealthStore
    private let logger: Logger
    private var interpreter: FrameInterpreter
    private var skips: SkipLedger
    private var authorization: AuthorizationWatch
    private var pending: [QuantitySample] = []
    private var failing = false

    public init(store: HealthStore, settings: IngestSettings, logger: Logger) {
        self.store = store
        self.settings = settings
        self.logger = logger
        self.interpreter = FrameInterpreter(locationOverrides: settings.locationOverrides)
        self.skips = SkipLedger(logger: logger)
        self.authorization = AuthorizationWatch(source: settings.source.name, logger: logger)
        pending.reserveCapacity(settings.maxBatch)
    }

    /// Skips so far, per device and reason.
    public var skipTotals: [(device: SensorID, reason: String, count: Int)] {
        skips.totals.sorted { $0.key < $1.key }.map { ($0.key.device, $0.key.category, $0.value) }
    }

    /// The share status of each written type as the last write saw it.
    public var authorizationStatuses: [SampleType: AuthorizationStatus] { authorization.statuses }

    /// Records the authorization request so `hrmctl auth list` shows it, and logs the state.
    public mutating func announce() {
        do {
            authorization.observe(try store.requestAuthorization(source: settings.source.name, toShare: IngestSettings.writtenTypes))
        } catch {
            logger.error("cannot record the authorization request: \(error)")
        }
    }

    /// Replaces the locations that win over what sensors report.
    public mutating func updateLocationOverrides(_ overrides: [SensorID: HeartRateSensorLocation]) {
        interpreter.locationOverrides = overrides
    }

    /// The battery level `device` last reported, in percent.
    public func batteryLevel(of device: SensorID) -> Int? { interpreter.profiles[device]?.battery }

    /// Takes one frame; writes when the batch is full. Returns how many skips it caused.
    @discardableResult
    public mutating func accept(_ frame: SensorFrame) -> Int {
        skips(accepting: frame).count
    }

    /// Takes one frame as `accept` does; returns why it, or part of it, was skipped (a replay
    /// tells a frame that does not decode with its line).
    public mutating func skips(accepting frame: SensorFrame) -> [SkipReason] {
        counters.frames += 1
        let skipped = interpreter.interpret(frame, into: &pending)
        for reason in skipped { skips.record(reason, device: frame.device) }
        counters.skipped += skipped.count
        if pending.count >= settings.maxBatch { flush() }
        return skipped
    }

    /// Writes the pending batch (and logs skip summaries when due).
    public mutating func flush() {
        skips.summarize()
        guard !pending.isEmpty else { return }
        do {
            let report = try store.save(pending, from: settings.source)
            authorization.observe(report.authorization)
            counters.stored += report.stored
            counters.unchanged += report.unchanged
            counters.replaced += report.replaced
            counters.denied += report.deniedCount
            pending.removeAll(keepingCapacity: true)
            if failing {
                failing = false
                logger.notice("the store is writable again")
            }
        } catch {
            if !failing {
                failing = true
                logger.error("cannot write to the store (samples are kept and retried): \(error)")
            }
            if pending.count > settings.maxPending {
                let excess = pending.count - settings.maxPending
                pending.removeFirst(excess)
                counters.lost += excess
                logger.error("dropped the \(excess) oldest unwritten samples: the store has been unwritable too long")
            }
        }
        counters.pending = pending.count
    }

    /// The last flush: retried a few times so a briefly locked store does not lose the batch.
    public mutating func finish() {
        for _ in 0..<3 where !pending.isEmpty { flush() }
        skips.summarize(force: true)
        if !pending.isEmpty {
            counters.lost += pending.count
            logger.error("could not write \(pending.count) samples before stopping")
            pending.removeAll()
            counters.pending = 0
        }
    }
}
