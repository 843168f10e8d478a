/// The notifications and indications of one ``ATTClient``, in arrival order; the sequence
/// finishes when the bearer ends (or the iterating task is cancelled).
///
/// The reading thread hands them over in batches, all it read in one wake-up (at a strap's
/// pace, one), so a flood costs one hand-over between threads per batch, not per notification.
public struct ATTNotifications: AsyncSequence, Sendable {
    public typealias Element = ATTNotification
    public typealias Failure = Never

    let batches: AsyncStream<[ATTNotification]>

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(batches: batches.makeAsyncIterator())
    }

    public struct AsyncIterator: AsyncIteratorProtocol {
        var batches: AsyncStream<[ATTNotification]>.AsyncIterator
        var batch: [ATTNotification] = []
        var taken = 0

        public mutating func next() async -> ATTNotification? {
            while taken == batch.count {
                guard let next = await batches.next() else { return nil }
                batch = next
                taken = 0
            }
            defer { taken += 1 }
            return batch[taken]
        }
    }
}
