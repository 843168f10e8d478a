import Foundation

/// Runs `work`, which blocks (SQLite writes paced by a recording's own clock), on a thread of
/// its own and awaits its result, so no thread of the cooperative pool waits on it.
/// Cancelling the caller does not stop `work`: it runs to its end.
func onOwnThread<T: Sendable>(named name: String, _ work: @escaping @Sendable () throws -> T) async throws -> T {
    let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<T, any Error>, Never>) in
        let thread = Thread { continuation.resume(returning: Result(catching: work)) }
        thread.name = name
        thread.start()
    }
    return try result.get()
}
