import Synchronization

/// The one bound on every wait in the tests. A test waits for events (a frame, a log line, a
/// count, a message), never for an amount of time, and a wait that ends by this bound means the
/// event is not coming: the code under test hung or lost it. It is not a speed expectation.
public enum HangBound {
    /// How long any one wait goes on before the test calls it hung: 120 s. In a full run on two
    /// cores, Swift Testing's cooperative pool can be held by other tests for many seconds, and
    /// other builds may be running beside the tests; a debug hrmd may take tens of seconds to
    /// start there. Two minutes is far above all of that and still ends a hung run.
    public static let duration: Duration = .seconds(120)

    /// The `.timeLimit` of a suite whose tests wait (Swift Testing counts whole minutes): above
    /// ``duration``, so a hung wait fails with its own message before the limit ends the test,
    /// with room for the test's other steps.
    public static let suiteMinutes = 5
}

/// A wait whose event did not come within ``HangBound/duration``.
public struct WaitHung: Error, CustomStringConvertible {
    /// What was waited for.
    public var what: String

    public init(what: String) {
        self.what = what
    }

    public var description: String { "hung waiting for \(what) (nothing within \(HangBound.duration))" }
}

/// Waits until `condition` holds, checking it every `interval`; throws ``WaitHung`` once
/// ``HangBound/duration`` has passed without it. Cancelling the task ends the wait too.
public func eventually(
    _ what: String, checkingEvery interval: Duration = .milliseconds(10), _ condition: () async throws -> Bool
) async throws {
    let deadline = ContinuousClock.now.advanced(by: HangBound.duration)
    while try await !condition() {
        guard ContinuousClock.now < deadline else { throw WaitHung(what: what) }
        try await Task.sleep(for: interval)
    }
}

/// The value of `body`, or ``WaitHung`` when it has not returned within ``HangBound/duration``:
/// for a call that may lose its caller's wake-up (a lost request, a stream that never
/// finishes), so the test fails instead of hanging. `body` runs in a task of its own, so a body
/// that ignores cancellation cannot hold the test past the bound; it is cancelled then, and
/// when the caller is cancelled.
public func withinHangBound<T: Sendable>(_ what: String, _ body: @escaping @Sendable () async -> T) async throws(WaitHung) -> T {
    let race = Race<T>()
    let value = await withTaskCancellationHandler {
        await withCheckedContinuation { continuation in race.start(continuation, body) }
    } onCancel: {
        race.cancel()
    }
    guard let value else { throw WaitHung(what: what) }
    return value.value
}

/// `body` against the hang bound: the continuation gets whichever ends first.
private final class Race<T: Sendable>: Sendable {
    /// What `body` returned (a box, so a `T` that is itself optional stays apart from "none").
    struct Finished: Sendable {
        var value: T
    }

    private struct State {
        var continuation: CheckedContinuation<Finished?, Never>?
        var timer: Task<Void, Never>?
        var work: Task<Void, Never>?
        var cancelled = false
    }

    private let state = Mutex(State())

    func start(_ continuation: CheckedContinuation<Finished?, Never>, _ body: @escaping @Sendable () async -> T) {
        state.withLock { $0.continuation = continuation }
        let timer = Task {
            try? await Task.sleep(for: HangBound.duration)
            self.finish(nil)
        }
        let work = Task {
            self.finish(Finished(value: await body()))
        }
        let (cancelled, over) = state.withLock { state in
            (state.timer, state.work) = (timer, work)
            return (state.cancelled, state.continuation == nil)
        }
        if cancelled { work.cancel() }
        if over { timer.cancel() }
    }

    /// The caller was cancelled: so is `body`, which then ends as it ends on cancellation (the
    /// hang bound still stands).
    func cancel() {
        let work = state.withLock { state in
            state.cancelled = true
            return state.work
        }
        work?.cancel()
    }

    /// Resumes the waiter once, with the first result; a finished body stops the timer.
    private func finish(_ result: Finished?) {
        let (continuation, timer) = state.withLock { state in (state.continuation.take(), state.timer) }
        guard let continuation else { return }
        continuation.resume(returning: result)
        if result != nil { timer?.cancel() }
    }
}
