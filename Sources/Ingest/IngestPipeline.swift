import HealthStore
import Logging
import SensorDecoding
import ServiceLifecycle
import Synchronization

/// The ingest pipeline: frames → decode → typed samples → stored-sample policy → authorized,
/// batched writes. One consumer task owns all of its state; backends only submit frames to
/// its `inbox`. On graceful shutdown it drains the inbox, flushes, and returns.
public final class IngestPipeline: Service, Sendable {
    /// How the pipeline batches.
    public struct Settings: Sendable {
        /// The source that writes, and whose authorization applies.
        public var source: HealthSource
        /// Longest time a sample waits before it is written.
        public var flushInterval: Duration
        /// A batch is written as soon as it holds this many samples.
        public var maxBatch: Int
        /// Samples kept for retry while the store cannot be written; beyond it the oldest go.
        public var maxPending: Int
        /// Locations that win over what sensors report.
        public var locationOverrides: [SensorID: HeartRateSensorLocation]

        public init(
            source: HealthSource, flushInterval: Duration = .milliseconds(500), maxBatch: Int = 1000,
            maxPending: Int = 200_000, locationOverrides: [SensorID: HeartRateSensorLocation] = [:]
        ) {
            self.source = source
            self.flushInterval = flushInterval
            self.maxBatch = maxBatch
            self.maxPending = maxPending
            self.locationOverrides = locationOverrides
        }
    }

    /// The types the pipeline writes, and asks permission for.
    public static let writtenTypes: [SampleType] = [.heartRate, .rrInterval, .activeEnergyBurned]

    public let inbox: FrameInbox
    private let store: HealthStore
    private let settings: Settings
    private let logger: Logger
    private let counters = Mutex(IngestCounters())

    public init(store: HealthStore, settings: Settings, logger: Logger, inbox: FrameInbox = FrameInbox()) {
        self.store = store
        self.settings = settings
        self.logger = logger
        self.inbox = inbox
    }

    /// What the pipeline has done so far.
    public var snapshot: IngestCounters { counters.withLock { $0 } }

    public func run() async throws {
        var worker = Worker(store: store, settings: settings, logger: logger)
        worker.announce()
        await withGracefulShutdownHandler {
            await withDiscardingTaskGroup { group in
                group.addTask { [inbox, settings] in
                    while (try? await Task.sleep(for: settings.flushInterval)) != nil { inbox.tick() }
                }
                for await input in inbox.inputs {
                    switch input {
                    case .frame(let frame): worker.accept(frame)
                    case .tick: worker.flush()
                    }
                    let current = worker.counters
                    counters.withLock { $0 = current }
                }
                group.cancelAll()
            }
        } onGracefulShutdown: { [inbox] in
            inbox.finish()
        }
        worker.finish()
        let final = worker.counters
        counters.withLock { $0 = final }
    }
}

/// Totals of one pipeline run.
public struct IngestCounters: Sendable, Equatable {
    public var frames = 0
    public var stored = 0
    public var unchanged = 0
    public var replaced = 0
    public var denied = 0
    public var skipped = 0
    /// Samples dropped because the store stayed unwritable past the retry buffer.
    public var lost = 0
    public var pending = 0
    public init() {}
}

/// The pipeline's state, owned by its one consuming task.
private struct Worker {
    let store: HealthStore
    let settings: Settings
    let logger: Logger
    var interpreter: FrameInterpreter
    var skips: SkipLedger
    var authorization: AuthorizationWatch
    var pending: [QuantitySample] = []
    var counters = IngestCounters()
    var failing = false

    typealias Settings = IngestPipeline.Settings

    init(store: HealthStore, settings: Settings, logger: Logger) {
        self.store = store
        self.settings = settings
        self.logger = logger
        self.interpreter = FrameInterpreter(locationOverrides: settings.locationOverrides)
        self.skips = SkipLedger(logger: logger)
        self.authorization = AuthorizationWatch(source: settings.source.name, logger: logger)
        pending.reserveCapacity(settings.maxBatch)
    }

    /// Records the authorization request so `hrmctl auth list` shows it, and logs the state.
    mutating func announce() {
        do {
            authorization.observe(try store.requestAuthorization(source: settings.source.name, toShare: IngestPipeline.writtenTypes))
        } catch {
            logger.error("cannot record the authorization request: \(error)")
        }
    }

    mutating func accept(_ frame: SensorFrame) {
        counters.frames += 1
        let result = interpreter.interpret(frame)
        for reason in result.skips { skips.record(reason, device: frame.device) }
        counters.skipped += result.skips.count
        pending.append(contentsOf: result.samples)
        if pending.count >= settings.maxBatch { flush() }
    }

    mutating func flush() {
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
    mutating func finish() {
        for _ in 0..<3 where !pending.isEmpty { flush() }
        skips.summarize(force: true)
        if !pending.isEmpty {
            counters.lost += pending.count
            logger.error("could not write \(pending.count) samples before stopping")
        }
        logger.info(
            "ingest stopped: \(counters.frames) frames, \(counters.stored) samples stored, \(counters.unchanged) already stored, \(counters.denied) not authorized, \(counters.skipped) skipped")
    }
}
