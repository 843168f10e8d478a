import Glibc
import Timestamps

/// Paces a replay: nil plays as fast as possible, otherwise the recorded gaps ÷ speed.
struct ReplayPace {
    private let speed: Double?
    private var origin: (recorded: Timestamp, started: ContinuousClock.Instant)?

    /// A speed that is not a positive finite number plays as fast as possible.
    init(speed: Double?) { self.speed = speed.flatMap { $0 > 0 && $0.isFinite ? $0 : nil } }

    mutating func wait(until time: Timestamp) {
        guard let speed else { return }
        guard let origin else {
            origin = (time, .now)
            return
        }
        let offset = Double(time.microsecondsSinceEpoch - origin.recorded.microsecondsSinceEpoch) / 1e6 / speed
        let remaining = origin.started.advanced(by: .seconds(max(0, offset))) - .now
        let microseconds = Double(remaining.components.seconds) * 1e6 + Double(remaining.components.attoseconds) / 1e12
        if microseconds > 0 { usleep(useconds_t(min(microseconds, 60e6))) }
    }
}
