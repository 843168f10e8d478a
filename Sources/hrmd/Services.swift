import Logging
import Recordings
import ServiceLifecycle
import SystemdSupport
import UnixSignals

/// Ends the run after `--duration`: returning starts the group's graceful shutdown.
struct RunLimit: Service {
    let duration: Duration

    func run() async {
        try? await cancelWhenGracefulShutdown { [duration] in try await Task.sleep(for: duration) }
    }
}

/// Runs the trace recorder until graceful shutdown, then lets it write what is queued.
struct RecorderService: Service {
    let recorder: TraceRecorder

    func run() async {
        await withGracefulShutdownHandler {
            await recorder.run()
        } onGracefulShutdown: { [recorder] in
            recorder.finish()
        }
    }
}

/// Started last, so everything before it runs: tells the service manager hrmd is ready,
/// re-reads the configuration on SIGHUP, and says STOPPING=1 when shutdown begins.
struct LifecycleService: Service {
    let notifier: ServiceNotifier
    let status: @Sendable () -> String
    let reload: @Sendable () async -> Void
    let logger: Logger

    func run() async {
        notifier.ready(status: status())
        logger.info("ready: \(status())")
        await withGracefulShutdownHandler {
            for await _ in await UnixSignalsSequence(trapping: .sighup).cancelOnGracefulShutdown() {
                notifier.reloading()
                logger.notice("SIGHUP: reloading the configuration")
                await reload()
                notifier.ready(status: status())
            }
        } onGracefulShutdown: { [notifier] in
            notifier.stopping()
        }
    }
}
