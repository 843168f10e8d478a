import Foundation
import Synchronization

/// Runs `work`, which may block for a while (in the kernel: bringing an adapter up waits for its
/// whole initialisation, a connect waits for the strap; hrmctl's replay into a file paces its
/// SQLite writes by the recording's clock), on a thread of its own, so the cooperative pool
/// never waits on it. Cancelling the caller does not stop `work`: give it a
/// way to end early (a wake-up pipe) where it can wait long, or use the abandoning form below.
public func onOwnThread<T: Sendable, Failure: Error>(
    named name: String, _ work: @escaping @Sendable () throws(Failure) -> T
) async throws(Failure) -> T {
    let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<T, Failure>, Never>) in
        let thread = Thread { continuation.resume(returning: Result(catching: work)) }
        thread.name = name
        thread.start()
    }
    return try result.get()
}

/// Runs `work` on a thread of its own, as the form above does, for work that has no way to end
/// early, but a cancelled caller does not wait for it: the call throws `cancelled` at once (and a
/// caller cancelled before the call never starts `work`), and what `work` returns after that
/// goes to `discard`, on the work's thread, to close what it opened. A stopping hrmd then
/// never waits on the kernel: bringing an adapter up can take seconds (a firmware download, a
/// controller slow to answer its initialisation), and the thread ends with the process.
public func onOwnThread<T: Sendable, Failure: Error>(
    named name: String, abandonedOnCancel cancelled: Failure, discard: @escaping @Sendable (T) -> Void,
    _ work: @escaping @Sendable () throws(Failure) -> T
) async throws(Failure) -> T {
    let handOver = AbandonableResult<T, Failure>(cancelled: cancelled, discard: discard)
    let result = await withTaskCancellationHandler {
        await withCheckedContinuation { (continuation: CheckedContinuation<Result<T, Failure>, Never>) in
            guard handOver.wait(continuation) else { return }
            let thread = Thread { handOver.finish(Result(catching: work)) }
            thread.name = name
            thread.start()
        }
    } onCancel: {
        handOver.abandon()
    }
    return try result.get()
}

/// The meeting point of a caller that may give up and work on a thread that always finishes:
/// whichever comes first (the result or the caller giving up) resumes the caller, once; a
/// result that comes after the caller gave up is discarded.
private final class AbandonableResult<T: Sendable, Failure: Error>: Sendable {
    private enum State {
        case starting
        case awaited(CheckedContinuation<Result<T, Failure>, Never>)
        case abandoned
        case delivered
    }

    private let state = Mutex(State.starting)
    private let cancelled: Failure
    private let discard: @Sendable (T) -> Void

    init(cancelled: Failure, discard: @escaping @Sendable (T) -> Void) {
        self.cancelled = cancelled
        self.discard = discard
    }

    /// The caller waits on `continuation`; false (and `continuation` resumed with the
    /// cancellation) when it already gave up, so the work is not started.
    func wait(_ continuation: CheckedContinuation<Result<T, Failure>, Never>) -> Bool {
        let gaveUp = state.withLock { state -> Bool in
            guard case .starting = state else { return true }
            state = .awaited(continuation)
            return false
        }
        if gaveUp { continuation.resume(returning: .failure(cancelled)) }
        return !gaveUp
    }

    /// The caller gives up: it is resumed with the cancellation now, unless the result came first.
    func abandon() {
        let waiting = state.withLock { state -> CheckedContinuation<Result<T, Failure>, Never>? in
            switch state {
            case .starting:
                state = .abandoned
                return nil
            case .awaited(let continuation):
                state = .abandoned
                return continuation
            case .abandoned, .delivered:
                return nil
            }
        }
        waiting?.resume(returning: .failure(cancelled))
    }

    /// The work's result: to the caller, or to `discard` when the caller gave up.
    func finish(_ result: Result<T, Failure>) {
        let waiting = state.withLock { state -> CheckedContinuation<Result<T, Failure>, Never>? in
            guard case .awaited(let continuation) = state else { return nil }
            state = .delivered
            return continuation
        }
        if let waiting {
            waiting.resume(returning: result)
        } else if case .success(let value) = result {
            discard(value)
        }
    }
}
