@preconcurrency import Glibc

/// Something the mock clock runs periodically.
protocol MockClockEntry: AnyObject {
    /// When the entry is next due, in nanoseconds of `CLOCK_MONOTONIC`.
    var due: UInt64 { get }
    /// Sends what was due and moves `due` on; called on the clock's thread, under its lock.
    func fire()
}

/// The mock clock's thread could not be started (`pthread_create`'s error number).
struct MockClockError: Error, CustomStringConvertible {
    var errno: Int32
    var description: String { "cannot start the mock clock's thread: \(String(cString: strerror(errno))) (errno \(errno))" }
}

/// One clock for every mock strap of the process: a thread that sleeps until the earliest
/// strap is due (give or take `tolerance`, so straps started together share a wake-up), then
/// lets every strap that is due send its frame. Twenty mocks at 4 Hz wake one thread a few
/// times a second instead of eighty sleeping tasks. The thread exists while a strap runs.
final class MockClock: @unchecked Sendable {
    static let shared = MockClock()

    /// How late a strap may fire so that it shares its wake-up with another.
    private let tolerance: UInt64 = 4_000_000

    private struct Registration {
        var entry: any MockClockEntry
        var stopped: CheckedContinuation<Void, Never>
    }

    // Everything below is guarded by `lock`.
    private let lock = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    /// Signalled when an entry comes, so the thread looks again at when to wake.
    private let changed = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var registrations: [UInt64: Registration] = [:]
    /// Runs cancelled before their entry was registered.
    private var cancelledEarly: Set<UInt64> = []
    private var nextIdentifier: UInt64 = 0
    private var threadRunning = false

    private init() {
        pthread_mutex_init(lock, nil)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(changed, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    /// Now, in nanoseconds of `CLOCK_MONOTONIC`.
    static func now() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }

    /// Fires `entry` whenever it is due until the calling task is cancelled. When this
    /// returns, `entry` is not fired again.
    func run(_ entry: some MockClockEntry) async throws(MockClockError) {
        let id = withLock { () -> UInt64 in
            nextIdentifier += 1
            return nextIdentifier
        }
        var failure: Int32 = 0
        await withTaskCancellationHandler {
            await withCheckedContinuation { (stopped: CheckedContinuation<Void, Never>) in
                let resumeNow = withLock { () -> Bool in
                    if cancelledEarly.remove(id) != nil { return true }
                    if !threadRunning {
                        failure = startThread()
                        guard failure == 0 else { return true }
                        threadRunning = true
                    }
                    registrations[id] = Registration(entry: entry, stopped: stopped)
                    pthread_cond_signal(changed)
                    return false
                }
                if resumeNow { stopped.resume() }
            }
        } onCancel: {
            let stopped = withLock { () -> CheckedContinuation<Void, Never>? in
                guard let registration = registrations.removeValue(forKey: id) else {
                    cancelledEarly.insert(id)
                    return nil
                }
                return registration.stopped
            }
            stopped?.resume()
        }
        if failure != 0 { throw MockClockError(errno: failure) }
    }

    private func withLock<T>(_ body: () -> T) -> T {
        pthread_mutex_lock(lock)
        defer { pthread_mutex_unlock(lock) }
        return body()
    }

    /// Starts the thread (with the lock held); `pthread_create`'s result.
    private func startThread() -> Int32 {
        var thread = pthread_t()
        let created = pthread_create(&thread, nil, { context in
            Unmanaged<MockClock>.fromOpaque(context!).takeUnretainedValue().fireUntilIdle()
            return nil
        }, Unmanaged.passUnretained(self).toOpaque())
        if created == 0 { pthread_detach(thread) }
        return created
    }

    /// Fires what is due and sleeps until the next is, while any entry is registered.
    private func fireUntilIdle() {
        pthread_mutex_lock(lock)
        defer { pthread_mutex_unlock(lock) }
        while !registrations.isEmpty {
            let now = Self.now()
            for registration in registrations.values where registration.entry.due <= now { registration.entry.fire() }
            guard let earliest = registrations.values.lazy.map({ $0.entry.due }).min(), earliest > now else { continue }
            let wake = earliest + tolerance
            var deadline = timespec(tv_sec: Int(wake / 1_000_000_000), tv_nsec: Int(wake % 1_000_000_000))
            _ = pthread_cond_timedwait(changed, lock, &deadline)
        }
        threadRunning = false
    }
}
