import Dispatch

/// Runs the store's blocking work (SQLite reads on their own WAL reader connections,
/// writes, a client's pipe) on threads of their own, so that a flood of requests never takes
/// the cooperative threads the ingest pipeline and the sensors run on. Every front of the
/// store, and the live feed, runs its store work here.
public struct StoreWorkers: Sendable {
    private let queue: DispatchQueue

    /// `label` names the threads in a debugger; `qos` is their priority (on Linux, their nice
    /// value: utility 2; user-initiated −2, that of the cooperative pool's tasks).
    public init(label: String = "hrmd.store-workers", qos: DispatchQoS = .utility) {
        queue = DispatchQueue(label: label, qos: qos, attributes: .concurrent)
    }

    /// Runs `body` on a worker thread and returns its result.
    public func run<T: Sendable, Failure: Error>(_ body: @escaping @Sendable () throws(Failure) -> T) async throws(Failure) -> T {
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<T, Failure>, Never>) in
            queue.async {
                do throws(Failure) { continuation.resume(returning: .success(try body())) } catch { continuation.resume(returning: .failure(error)) }
            }
        }
        return try result.get()
    }
}
