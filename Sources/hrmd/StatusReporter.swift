import Ingest
import Synchronization
import SystemdSupport

/// Turns the ingest loop's ticks into service-manager messages: a WATCHDOG=1 keep-alive at
/// the watchdog's pace, and a STATUS= line every few seconds.
final class StatusReporter: Sendable {
    private struct State {
        var sensors = 0
        var counters = IngestCounters()
        var lastKeepAlive: ContinuousClock.Instant?
        var lastStatus: ContinuousClock.Instant?
    }

    private let notifier: ServiceNotifier
    private let statusInterval: Duration
    private let state = Mutex(State())

    init(notifier: ServiceNotifier, statusInterval: Duration = .seconds(5)) {
        self.notifier = notifier
        self.statusInterval = statusInterval
    }

    /// The number of sensors running, for the status line.
    func setSensorCount(_ count: Int) { state.withLock { $0.sensors = count } }

    /// The status line: sensors and what the pipeline did.
    var line: String {
        state.withLock { state in
            let counters = state.counters
            return "\(state.sensors) sensor(s), \(counters.streamingSensors) streaming; \(counters.frames) frames; \(counters.stored) samples stored; \(counters.denied) not authorized; \(counters.skipped) skipped"
        }
    }

    /// Called by the ingest loop after each periodic flush.
    func tick(_ counters: IngestCounters) {
        let now = ContinuousClock.now
        let (keepAlive, status) = state.withLock { state -> (Bool, Bool) in
            state.counters = counters
            var keepAlive = false
            if let interval = notifier.watchdogInterval, state.lastKeepAlive.map({ now - $0 >= interval / 2 }) ?? true {
                state.lastKeepAlive = now
                keepAlive = true
            }
            var status = false
            if state.lastStatus.map({ now - $0 >= statusInterval }) ?? true {
                state.lastStatus = now
                status = true
            }
            return (keepAlive, status)
        }
        if keepAlive { notifier.watchdogKeepAlive() }
        if status { notifier.status(line) }
    }
}
