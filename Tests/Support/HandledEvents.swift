import Synchronization

/// A stream of events a test sends by hand to the code under test, which tells when that code
/// has dealt with every event sent so far: a reader that asks for the next event is done with
/// the one before. The positive event a "nothing happened" check waits for, where the code under
/// test reads its events one at a time.
public final class HandledEvents<Event: Sendable>: Sendable {
    /// What the code under test reads.
    public let stream: AsyncStream<Event>
    private let continuation: AsyncStream<Event>.Continuation
    private let reader: Reader
    private let sent = Mutex(0)

    /// The inner stream's iterator; only the one reader of `stream` uses it, one call at a time.
    private final class Reader: @unchecked Sendable {
        var iterator: AsyncStream<Event>.Iterator
        let asks = Mutex(0)
        init(_ iterator: AsyncStream<Event>.Iterator) { self.iterator = iterator }
    }

    public init() {
        let (inner, continuation) = AsyncStream.makeStream(of: Event.self)
        self.continuation = continuation
        let reader = Reader(inner.makeAsyncIterator())
        self.reader = reader
        stream = AsyncStream(unfolding: {
            reader.asks.withLock { $0 += 1 }
            return await reader.iterator.next()
        })
    }

    /// Sends `event` to the reader.
    public func send(_ event: Event) {
        sent.withLock { $0 += 1 }
        continuation.yield(event)
    }

    /// Ends the stream.
    public func finish() { continuation.finish() }

    /// Whether the reader has dealt with every event sent so far: it asked for one more.
    public var handledAll: Bool {
        let sent = sent.withLock { $0 }
        return reader.asks.withLock { $0 } > sent
    }
}
