import Dispatch
import Synchronization

/// Hands values from a task or thread to a synchronous consumer on another thread, in order,
/// bounded: a producer that gets `capacity` values ahead waits for the consumer (so a year of
/// samples never sits in memory, and the service's writes wait on the pipe instead).
final class BlockingChannel<Element: Sendable>: Sendable {
    private struct State {
        var items: [Element] = []
        var end: Result<Void, CommandFailureBox>?
    }

    /// A failure carried to the consumer.
    struct CommandFailureBox: Error { let failure: any Error & Sendable }

    private let state = Mutex(State())
    private let available = DispatchSemaphore(value: 0)
    private let room: DispatchSemaphore
    init(capacity: Int = 16_384) { room = DispatchSemaphore(value: capacity) }

    /// Adds a value, waiting while the channel is full (the producer side).
    func send(_ element: Element) {
        room.wait()
        state.withLock { $0.items.append(element) }
        available.signal()
    }

    /// Ends the channel, with the producer's error if it failed.
    func finish(throwing error: (any Error & Sendable)? = nil) {
        state.withLock { $0.end = error.map { .failure(CommandFailureBox(failure: $0)) } ?? .success(()) }
        available.signal()
    }

    /// Calls `body` with each value on this thread until the channel ends; rethrows the
    /// producer's error.
    func drain(_ body: (Element) throws -> Void) throws {
        while true {
            available.wait()
            let (items, end) = state.withLock { state -> ([Element], Result<Void, CommandFailureBox>?) in
                defer { state.items.removeAll(keepingCapacity: true) }
                return (state.items, state.items.isEmpty ? state.end : nil)
            }
            for item in items {
                room.signal()
                try body(item)
            }
            if !items.isEmpty {
                // One signal per send was taken for the first item only: take the others'.
                for _ in 1..<items.count { available.wait() }
                continue
            }
            if let end {
                if case .failure(let box) = end { throw box.failure }
                return
            }
        }
    }
}
