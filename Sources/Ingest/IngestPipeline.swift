import HealthModel
import HealthStore
import Logging
import SensorFrames
import ServiceLifecycle
import Synchronization
import Timestamps

/// The live ingest pipeline: backends submit frames to its `inbox`; one task takes them in
/// batches (at each tick, or sooner when many are queued), feeds them to a `FrameIngestor` and
/// flushes on the tick. On graceful shutdown it drains the inbox, flushes,
/// and returns.
public final class IngestPipeline: Service, Sendable {
    public let inbox: FrameInbox
    private let store: HealthStore
    private let settings: IngestSettings
    private let logger: Logger
    private let counters = Mutex(IngestCounters())
    private let onTick: @Sendable (IngestCounters) -> Void

    /// A pipeline; `onTick` runs on the ingest loop after each periodic flush (the daemon
    /// sends its watchdog keep-alive from there, so a stuck loop stops the keep-alives).
    public init(
        store: HealthStore, settings: IngestSettings, logger: Logger, inbox: FrameInbox = FrameInbox(),
        onTick: @escaping @Sendable (IngestCounters) -> Void = { _ in }
    ) {
        self.store = store
        self.settings = settings
        self.logger = logger
        self.inbox = inbox
        self.onTick = onTick
    }

    /// What the pipeline has done so far.
    public var snapshot: IngestCounters { counters.withLock { $0 } }

    public func run() async {
        var ingestor = FrameIngestor(store: store, settings: settings, logger: logger)
        var activity = SensorActivityBoard()
        var activityWriteFailing = false
        ingestor.announce()
        /// Writes the sensors' rows when they changed or the heartbeat is due; a failure is logged once.
        func publishActivity(force: Bool = false) {
            let now = Timestamp.now()
            guard force || activity.due(at: now) else { return }
            do {
                try store.replaceSensorActivity(activity.rows(at: now, battery: { [ingestor] in ingestor.batteryLevel(of: $0) }))
                activityWriteFailing = false
            } catch {
                if !activityWriteFailing { logger.warning("cannot record the sensors' state in the store: \(error)") }
                activityWriteFailing = true
            }
        }
        await withGracefulShutdownHandler {
            await withDiscardingTaskGroup { group in
                group.addTask { [inbox, settings] in
                    while (try? await Task.sleep(for: settings.flushInterval)) != nil { inbox.tick() }
                }
                var batch: [FrameInbox.Input] = []
                while await inbox.nextBatch(into: &batch) {
                    for input in batch {
                        switch input {
                        case .frame(let frame):
                            activity.count(frame, skipped: ingestor.accept(frame))
                        case .status(let status):
                            activity.note(status)
                        case .tick:
                            ingestor.flush()
                            publishActivity()
                            var counters = ingestor.counters
                            counters.streamingSensors = activity.streamingCount
                            logger.debug("flushed: \(counters.summary)")
                            onTick(counters)
                        case .locationOverrides(let overrides):
                            ingestor.updateLocationOverrides(overrides)
                        }
                    }
                    batch.removeAll(keepingCapacity: true)
                    let current = ingestor.counters
                    counters.withLock { $0 = current }
                }
                group.cancelAll()
            }
        } onGracefulShutdown: { [inbox] in
            inbox.finish()
        }
        ingestor.finish()
        activity.stopAll(at: .now(), reason: "hrmd stopped")
        publishActivity(force: true)
        let final = ingestor.counters
        counters.withLock { $0 = final }
        logger.info("ingest stopped: \(final.summary)")
    }
}
