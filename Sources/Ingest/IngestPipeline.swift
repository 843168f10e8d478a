import HealthStore
import Logging
import SensorDecoding
import ServiceLifecycle
import Synchronization

/// The live ingest pipeline: backends submit frames to its `inbox`; one task feeds them to a
/// `FrameIngestor` and flushes on a tick. On graceful shutdown it drains the inbox, flushes,
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
        ingestor.announce()
        await withGracefulShutdownHandler {
            await withDiscardingTaskGroup { group in
                group.addTask { [inbox, settings] in
                    while (try? await Task.sleep(for: settings.flushInterval)) != nil { inbox.tick() }
                }
                for await input in inbox.inputs {
                    switch input {
                    case .frame(let frame):
                        ingestor.accept(frame)
                    case .tick:
                        ingestor.flush()
                        onTick(ingestor.counters)
                    case .locationOverrides(let overrides):
                        ingestor.updateLocationOverrides(overrides)
                    }
                    let current = ingestor.counters
                    counters.withLock { $0 = current }
                }
                group.cancelAll()
            }
        } onGracefulShutdown: { [inbox] in
            inbox.finish()
        }
        ingestor.finish()
        let final = ingestor.counters
        counters.withLock { $0 = final }
        logger.info(
            "ingest stopped: \(final.frames) frames, \(final.stored) samples stored, \(final.unchanged) already stored, \(final.denied) not authorized, \(final.skipped) skipped")
    }
}
