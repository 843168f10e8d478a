import Synchronization

/// Whether the caller of one method call gave up on it (its task was cancelled): set from any
/// thread by the cancellation handler, read on the loop thread just before the call is sent.
/// The handler also asks the loop to drop the call, but that job may run before the call was
/// ever started and find nothing; the flag is what stops such a call from being sent after all
/// and then waiting for a reply nobody wants.
final class CallAbandonment: Sendable {
    private let requested = Atomic<Bool>(false)

    /// The caller gave up.
    func request() { requested.store(true, ordering: .sequentiallyConsistent) }

    var isRequested: Bool { requested.load(ordering: .sequentiallyConsistent) }
}
