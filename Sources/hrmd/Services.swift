import Logging
import SensorBackends
import ServiceLifecycle

/// Runs one sensor backend as a service until graceful shutdown; a backend that fails is
/// logged and the others go on.
struct SensorService: Service {
    let backend: any SensorBackend
    let sink: FrameSink
    let logger: Logger

    func run() async {
        let name = backend.name
        logger.info("sensor \(name) started")
        do {
            try await cancelWhenGracefulShutdown { [backend, sink] in try await backend.run(into: sink) }
            logger.info("sensor \(name) stopped")
        } catch is CancellationError {
            logger.info("sensor \(name) stopped")
        } catch {
            logger.error("sensor \(name) failed: \(error)")
        }
    }
}

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
