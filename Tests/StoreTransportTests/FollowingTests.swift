import HealthModel
import HealthRequests
import Timestamps
import HealthStore
import Synchronization
import TestSupport
import Testing

@testable import StoreTransport

@Suite("hrmctl's store access follows changes until a deadline or cancellation", .timeLimit(.minutes(HangBound.suiteMinutes)))
struct FollowingTests {
    /// A count that threads and tasks share.
    private final class Counter: Sendable {
        private let atomic = Atomic<Int>(0)
        var value: Int { atomic.load(ordering: .relaxed) }
        func increment() { atomic.add(1, ordering: .relaxed) }
    }

    /// A stream that yields `elements`, then ends with `ending` (nil: never ends), and counts
    /// its consumer stopping.
    private static func stream(
        _ elements: [Int], ending: (any Error)?? = nil, terminated: Counter
    ) -> AsyncThrowingStream<Int, any Error> {
        let (stream, continuation) = AsyncThrowingStream<Int, any Error>.makeStream()
        continuation.onTermination = { _ in terminated.increment() }
        for element in elements { continuation.yield(element) }
        if case .some(let error) = ending { continuation.finish(throwing: error) }
        return stream
    }

    private struct Gone: Error, Equatable {}

    @Test("a stream that never ends, followed until a deadline, ends there, and its producer is told")
    func deadlineEndsTheStream() async throws {
        let terminated = Counter()
        try await StreamUntilDeadline(elements: Self.stream([], terminated: terminated), deadline: .now.advanced(by: .milliseconds(100)))
            .forEach { (_: Int) in }
        try await eventually("the producer learns the consumer stopped") { terminated.value == 1 }
    }

    @Test("a stream's failure is the follower's, after the elements before it")
    func streamFailure() async throws {
        let terminated = Counter()
        var seen: [Int] = []
        do {
            try await StreamUntilDeadline(elements: Self.stream([1, 2, 3], ending: Gone(), terminated: terminated), deadline: nil)
                .forEach { seen.append($0) }
            Issue.record("the stream's failure was not thrown")
        } catch {
            #expect(error is Gone)
        }
        #expect(seen == [1, 2, 3])
    }

    @Test("cancelling a follower without a deadline ends it quietly, and its producer is told")
    func cancellationEndsTheStream() async throws {
        let terminated = Counter()
        let stream = Self.stream([], terminated: terminated)
        let follower = Task { try await StreamUntilDeadline(elements: stream, deadline: nil).forEach { (_: Int) in } }
        follower.cancel()
        try await follower.value
        try await eventually("the producer learns the consumer stopped") { terminated.value == 1 }
    }

    @Test("following a file's changes without a deadline ends when the task is cancelled")
    func cancelledFileFollow() async throws {
        let directory = try TemporaryDirectory(prefix: "hrmd-clistore")
        let access = FileTransport(store: try HealthStore.open(path: directory.file("s.sqlite"), mode: .createIfMissing))
        let follower = Task { try await access.followChanges(of: .heartRate, pollInterval: 60, until: nil) { _ in } }
        follower.cancel()
        try await follower.value
    }
}

@Suite("which events are news to a watcher")
struct EventFollowerTests {
    private static let base = Timestamp(microsecondsSinceEpoch: 1_790_000_000_000_000)

    private static func event(_ id: String, start: Double, latest: Double, ended: Bool = false) -> HealthEvent {
        HealthEvent(
            id: id, type: .highHeartRateEvent, source: "hrmd", device: "strap-1", person: nil, start: base.advanced(bySeconds: start),
            end: ended ? base.advanced(bySeconds: latest) : nil, latest: base.advanced(bySeconds: latest), threshold: 120, extreme: 130)
    }

    @Test("an event is news when it opens and when it ends; extensions are not; those open at the start are told when they end")
    func newsOfEvents() {
        var follower = EventFollower(types: [.highHeartRateEvent])
        let before = Self.event("before", start: 0, latest: 10)
        let closedBefore = Self.event("closed-before", start: 0, latest: 5, ended: true)
        follower.prime([before, closedBefore])
        #expect(follower.news(in: [before, closedBefore]).isEmpty)
        let opened = Self.event("new", start: 20, latest: 30)
        #expect(follower.news(in: [Self.event("before", start: 0, latest: 20), opened, closedBefore]) == [opened])
        #expect(follower.news(in: [Self.event("new", start: 20, latest: 40)]).isEmpty, "an extension")
        let ended = Self.event("new", start: 20, latest: 45, ended: true)
        let beforeEnded = Self.event("before", start: 0, latest: 25, ended: true)
        #expect(follower.news(in: [ended, beforeEnded]) == [beforeEnded, ended], "oldest start first")
        #expect(follower.news(in: [ended, beforeEnded]).isEmpty, "told once")
        // Opened and ended between two looks: told once, ended.
        let brief = Self.event("brief", start: 50, latest: 55, ended: true)
        #expect(follower.news(in: [brief]) == [brief])
    }
}
