import CLISupport
import Dispatch
import Synchronization

/// Hands values from a task or thread to a synchronous consumer on another thread, in order,
/// bounded: a producer that gets `capacity` values ahead waits for the consumer (so a year of
/// samples never sits in memory, and the service's writes wait on the pipe instead).
final class BlockingChannel<Element: Sendable>: Sendable {
    private struct State {
        var items: [Element] = []
        var end: Result<Void, CommandFailure>?
    }

    private let state = Mutex(State())
    /// Signalled once per value sent and once when the channel ends.
    private let available = DispatchSemaphore(value: 0)
    private let room: DispatchSemaphore

    init(capacity: Int = 16_384) { room = DispatchSemaphore(value: capacity) }

    /// Adds a value, waiting while the channel is full (the producer side).
    func send(_ element: Element) {
        room.wait()
        state.withLock { $0.items.append(element) }
        available.signal()
    }

    /// Ends the channel, with the producer's failure if it failed.
    func finish(failing failure: CommandFailure? = nil) {
        state.withLock { $0.end = failure.map { .failure($0) } ?? .success(()) }
        available.signal()
    }

    /// Calls `body` with each value on this thread until the channel ends; throws the
    /// producer's failure.
    func drain(_ body: (Element) -> Void) throws(CommandFailure) {
        while true {
            available.wait()
            let (items, end) = state.withLock { state -> ([Element], Result<Void, CommandFailure>?) in
                defer { state.items.removeAll(keepingCapacity: true) }
                return (state.items, state.items.isEmpty ? state.end : nil)
            }
            if let end { return try end.get() }
            for item in items {
                room.signal()
                body(item)
            }
            // The wait above took the signal of one value: take those of the others.
            for _ in items.dropFirst() { available.wait() }
        }
    }
}
