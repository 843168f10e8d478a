import HealthRequests
import Dispatch

/// Runs the store's blocking work (SQLite reads on their own WAL reader connections,
/// writes, a client's pipe) on threads of their own, so that a flood of calls never takes
/// the cooperative threads the ingest pipeline and the sensors run on.
struct StoreWorkers: Sendable {
    private let queue = DispatchQueue(label: "hrmd.store-service", qos: .utility, attributes: .concurrent)

    /// Runs `body` on a worker thread and returns its result.
    func run<T: Sendable>(_ body: @escaping @Sendable () throws(RequestFailure) -> T) async throws(RequestFailure) -> T {
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<T, RequestFailure>, Never>) in
            queue.async {
                do throws(RequestFailure) { continuation.resume(returning: .success(try body())) } catch { continuation.resume(returning: .failure(error)) }
            }
        }
        return try result.get()
    }
}
