import CMalloc
import Synchronization

/// Gives the C heap's free pages back to the system once a minute (`malloc_trim`). glibc keeps
/// an arena's freed pages resident until its top is free, so a daemon whose live heap stays
/// flat (about 2.5 MB with 20 straps) still grew by about 80 kB a minute over a long run as
/// frames, batches and SQLite's buffers were allocated and freed across its arenas; trimming
/// releases the free pages in the middle of each arena as well (glibc 2.8 and later).
final class HeapTrimmer: Sendable {
    private let interval: Duration
    private let last = Mutex<ContinuousClock.Instant?>(nil)

    init(interval: Duration = .seconds(60)) {
        self.interval = interval
    }

    /// Trims when the interval has passed since the last trim (the first call only starts it).
    func tick() {
        let now = ContinuousClock.now
        let due = last.withLock { last -> Bool in
            guard let previous = last else {
                last = now
                return false
            }
            guard now - previous >= interval else { return false }
            last = now
            return true
        }
        if due { malloc_trim(0) }
    }
}
