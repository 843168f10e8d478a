import Logging
import SensorBackend
import ServiceLifecycle

/// One sensor the daemon should run, with a stable key so a reload can tell it apart.
struct SensorPlan: Sendable {
    var key: String
    var backend: any SensorBackend
}

/// Runs the sensor backends and keeps them matched to the wanted set: on a reload it starts
/// the new ones and stops the removed ones, and leaves the ones still wanted streaming. A
/// backend that fails is logged; the others go on.
final class SensorSupervisor: Service, Sendable {
    private let sink: FrameSink
    private let logger: Logger
    private let wanted: AsyncStream<[SensorPlan]>
    private let continuation: AsyncStream<[SensorPlan]>.Continuation

    init(initial: [SensorPlan], sink: FrameSink, logger: Logger) {
        self.sink = sink
        self.logger = logger
        (wanted, continuation) = AsyncStream.makeStream(of: [SensorPlan].self, bufferingPolicy: .bufferingNewest(1))
        continuation.yield(initial)
    }

    /// Replaces the wanted set (a reloaded configuration).
    func update(_ plans: [SensorPlan]) { continuation.yield(plans) }

    func run() async {
        await withDiscardingTaskGroup { group in
            var running: [String: AsyncStream<Void>.Continuation] = [:]
            for await plans in wanted.cancelOnGracefulShutdown() {
                let keys = Set(plans.map(\.key))
                for (key, stop) in running where !keys.contains(key) {
                    logger.info("sensor \(key) removed by the configuration")
                    stop.finish()
                    running[key] = nil
                }
                for plan in plans where running[plan.key] == nil {
                    let (stopped, stop) = AsyncStream.makeStream(of: Void.self)
                    running[plan.key] = stop
                    group.addTask { [sink, logger] in
                        await Self.run(plan, until: stopped, sink: sink, logger: logger)
                    }
                }
            }
            for stop in running.values { stop.finish() }
        }
    }

    /// Runs one backend until it returns or `stopped` ends.
    private static func run(_ plan: SensorPlan, until stopped: AsyncStream<Void>, sink: FrameSink, logger: Logger) async {
        logger.info("sensor \(plan.key) started")
        await withTaskGroup(of: Void.self) { inner in
            inner.addTask {
                do {
                    try await plan.backend.run(into: sink)
                } catch is CancellationError {
                } catch {
                    logger.error("sensor \(plan.key) failed: \(error)")
                }
            }
            inner.addTask {
                for await _ in stopped {}
            }
            await inner.next()
            inner.cancelAll()
        }
        logger.info("sensor \(plan.key) stopped")
    }
}
