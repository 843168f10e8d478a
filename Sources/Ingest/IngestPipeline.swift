import Dispatch
import HealthModel
import HealthStore
import Logging
import SensorFrames
import ServiceLifecycle
import Synchronization
import Timestamps

/// The live ingest pipeline: backends submit frames to its `inbox`; one task takes them in
/// batches (at each tick, or sooner when many are queued) and hands each batch to the store's
/// workers, where a `FrameIngestor` takes it and flushes on the tick: SQLite's blocking writes
/// never run on the cooperative threads. On graceful shutdown it drains the inbox, flushes,
/// and returns.
public final class IngestPipeline: Service, Sendable {
    public let inbox: FrameInbox
    private let store: HealthStore
    private let settings: IngestSettings
    private let logger: Logger
    private let workers: StoreWorkers
    private let counters = Mutex(IngestCounters())
    private let onTick: @Sendable (IngestCounters) -> Void

    /// A pipeline; `onTick` runs after each periodic flush, in turn with the batches (the
    /// daemon sends its watchdog keep-alive from there, so a stuck loop stops the
    /// keep-alives). Its store work runs on `workers`, by default at the priority the loop
    /// had on the cooperative pool, so recording keeps its share of a busy machine.
    public init(
        store: HealthStore, settings: IngestSettings, logger: Logger, inbox: FrameInbox = FrameInbox(),
        workers: StoreWorkers = StoreWorkers(label: "hrmd.ingest", qos: .userInitiated),
        onTick: @escaping @Sendable (IngestCounters) -> Void = { _ in }
    ) {
        self.store = store
        self.settings = settings
        self.logger = logger
        self.inbox = inbox
        self.workers = workers
        self.onTick = onTick
    }

    /// What the pipeline has done so far.
    public var snapshot: IngestCounters { counters.withLock { $0 } }

    public func run() async {
        let loop = IngestLoop(store: store, settings: settings, logger: logger, onTick: onTick)
        await workers.run { loop.start() }
        await withGracefulShutdownHandler {
            await withDiscardingTaskGroup { group in
                group.addTask { [inbox, settings] in
                    while (try? await Task.sleep(for: settings.flushInterval)) != nil { inbox.tick() }
                }
                var batch: [FrameInbox.Input] = []
                while await inbox.nextBatch(into: &batch) {
                    let inputs = batch
                    let current = await workers.run { loop.take(inputs) }
                    batch.removeAll(keepingCapacity: true)
                    counters.withLock { $0 = current }
                }
                group.cancelAll()
            }
        } onGracefulShutdown: { [inbox] in
            inbox.finish()
        }
        let final = await workers.run { loop.stop() }
        counters.withLock { $0 = final }
        logger.info("ingest stopped: \(final.summary)")
    }
}

/// The ingest loop's state and its store work, which runs on the store's workers one batch
/// at a time: the frame ingestor and the board of the sensors' activity.
private final class IngestLoop: Sendable {
    private struct State {
        var ingestor: FrameIngestor
        var activity = SensorActivityBoard()
        /// Whether the last write of the sensors' rows failed (logged once).
        var activityWriteFailing = false
    }

    private let state: Mutex<State>
    private let store: HealthStore
    private let logger: Logger
    private let onTick: @Sendable (IngestCounters) -> Void

    init(store: HealthStore, settings: IngestSettings, logger: Logger, onTick: @escaping @Sendable (IngestCounters) -> Void) {
        state = Mutex(State(ingestor: FrameIngestor(store: store, settings: settings, logger: logger)))
        self.store = store
        self.logger = logger
        self.onTick = onTick
    }

    /// Records the authorization request before the first frame.
    func start() {
        state.withLock { $0.ingestor.announce() }
    }

    /// Takes one batch of the inbox's inputs; returns the counters after it.
    func take(_ inputs: [FrameInbox.Input]) -> IngestCounters {
        state.withLock { state in
            for input in inputs {
                switch input {
                case .frame(let frame):
                    state.activity.count(frame, skipped: state.ingestor.accept(frame))
                case .status(let status):
                    state.activity.note(status)
                case .tick:
                    state.ingestor.tick(now: .now())
                    publishActivity(&state)
                    var counters = state.ingestor.counters
                    counters.streamingSensors = state.activity.streamingCount
                    logger.debug("flushed: \(counters.summary)")
                    onTick(counters)
                case .locationOverrides(let overrides):
                    state.ingestor.updateLocationOverrides(overrides)
                }
            }
            return state.ingestor.counters
        }
    }

    /// Writes what is pending and marks every sensor stopped; returns the final counters.
    func stop() -> IngestCounters {
        state.withLock { state in
            state.ingestor.finish()
            state.activity.stopAll(at: .now(), reason: "hrmd stopped")
            publishActivity(&state, force: true)
            return state.ingestor.counters
        }
    }

    /// Writes the sensors' rows when they changed or the heartbeat is due; a failure is logged once.
    private func publishActivity(_ state: inout State, force: Bool = false) {
        let now = Timestamp.now()
        guard force || state.activity.due(at: now) else { return }
        do {
            try store.replaceSensorActivity(state.activity.rows(at: now, battery: { [ingestor = state.ingestor] in ingestor.batteryLevel(of: $0) }))
            state.activityWriteFailing = false
        } catch {
            if !state.activityWriteFailing { logger.warning("cannot record the sensors' state in the store: \(error)") }
            state.activityWriteFailing = true
        }
    }
}
