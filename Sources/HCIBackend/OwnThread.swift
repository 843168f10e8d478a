import Foundation

/// Runs `work`, which may block in the kernel for a while (bringing an adapter up waits for its
/// whole initialisation; a connect waits for the strap), on a thread of its own, so the
/// cooperative pool never waits on it. Cancelling the caller does not stop `work`: give it a
/// way to end early (a wake-up pipe) where it can wait long.
func onOwnThread<T: Sendable, Failure: Error>(
    named name: String, _ work: @escaping @Sendable () throws(Failure) -> T
) async throws(Failure) -> T {
    let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<T, Failure>, Never>) in
        let thread = Thread { continuation.resume(returning: Result(catching: work)) }
        thread.name = name
        thread.start()
    }
    return try result.get()
}
