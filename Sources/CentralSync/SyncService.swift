import Foundation
import HealthModel
import HealthStore
import Logging
import ServiceLifecycle

/// hrmd's sync into a central PostgreSQL store, one more service in its group. It reads the
/// local store as the source `hrmd/sync`, so only types that source may read leave the
/// machine, and follows its anchored changes: after each commit, or once a second, it sends
/// what is new in batches. The local store is the queue: while PostgreSQL is away hrmd
/// records as before, and the sync catches up when it is back.
public struct SyncService: Service {
    /// The source the sync reads as: `hrmctl auth grant hrmd/sync heart-rate --read`.
    public static let source = "hrmd/sync"

    private let settings: SyncSettings
    private let store: HealthStore
    private let logger: Logger

    public init(settings: SyncSettings, store: HealthStore, logger: Logger) {
        self.settings = settings
        self.store = store
        self.logger = logger
    }

    public func run() async throws {
        let workers = StoreWorkers(label: "hrmd.sync")
        do {
            try await workers.run { [store] () throws(HealthStoreError) in
                try store.requestAuthorization(source: Self.source, toShare: [], toRead: SampleType.all)
            }
        } catch {
            logger.warning("sync: cannot record the read request of \(Self.source): \(error)")
        }
        let loop = SyncLoop(settings: settings, store: store, logger: logger)
        let observation = store.observeChanges { [wakeup = loop.wakeup] _ in wakeup.signal() }
        await withGracefulShutdownHandler {
            await withTaskCancellationHandler {
                await withCheckedContinuation { (finished: CheckedContinuation<Void, Never>) in
                    let thread = Thread {
                        loop.run()
                        finished.resume()
                    }
                    thread.name = "hrmd-sync"
                    thread.start()
                }
            } onCancel: {
                loop.wakeup.stop()
            }
        } onGracefulShutdown: {
            loop.wakeup.stop()
        }
        withExtendedLifetime(observation) {}
    }
}
