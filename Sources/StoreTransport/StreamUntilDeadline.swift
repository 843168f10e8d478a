/// A stream's elements up to a deadline: how a watch of the store service ends on time
/// whatever the service does. The stream is read by a child task, a second one waits for the
/// deadline, and whichever ends first ends the other, all within the caller's task.
struct StreamUntilDeadline<Element: Sendable> {
    let elements: AsyncThrowingStream<Element, any Error>
    /// Nil: until the stream ends.
    let deadline: ContinuousClock.Instant?

    /// Calls `body` on this task with each element, in order, until the stream ends, the
    /// deadline passes or this task is cancelled; throws the stream's error. Stopping ends
    /// the consumption of `elements`, which tells its producer.
    func forEach(_ body: (Element) -> Void) async throws {
        let (bounded, sink) = AsyncThrowingStream<Element, any Error>.makeStream()
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { [elements] in
                do {
                    for try await element in elements { sink.yield(element) }
                    sink.finish()
                } catch {
                    sink.finish(throwing: error)
                }
            }
            if let deadline {
                group.addTask {
                    // Cancelled: the stream ended first, or the caller stopped.
                    guard (try? await Task.sleep(until: deadline, clock: .continuous)) != nil else { return }
                    sink.finish()
                }
            }
            defer { group.cancelAll() }
            for try await element in bounded { body(element) }
        }
    }
}
