import Foundation
import ReaderThreads
import Synchronization
import TestSupport
import Testing

/// Work on a thread of its own that a cancelled caller does not wait for.
@Suite("Work on a thread of its own, abandoned on cancellation", .timeLimit(.minutes(HangBound.suiteMinutes)))
struct OwnThreadTests {
    struct Refused: Error, Equatable {
        var reason: String
    }

    /// A gate the work waits at on its thread until the test opens it, and what the work was
    /// given back to discard.
    final class Gate: Sendable {
        private let semaphore = DispatchSemaphore(value: 0)
        private let arrived = Atomic<Bool>(false)
        private let discarded = Mutex<[Int]>([])

        func pass() {
            arrived.store(true, ordering: .sequentiallyConsistent)
            semaphore.wait()
        }

        var hasArrived: Bool { arrived.load(ordering: .sequentiallyConsistent) }
        func open() { semaphore.signal() }
        func discard(_ value: Int) { discarded.withLock { $0.append(value) } }
        var discardedValues: [Int] { discarded.withLock { $0 } }
    }

    /// Whether something happened, from any thread.
    final class Flag: Sendable {
        private let raised = Atomic<Bool>(false)
        func raise() { raised.store(true, ordering: .sequentiallyConsistent) }
        var isRaised: Bool { raised.load(ordering: .sequentiallyConsistent) }
    }

    @Test("an uncancelled caller gets what the work returns or throws")
    func uncancelled() async throws {
        let value = try await onOwnThread(named: "value", abandonedOnCancel: Refused(reason: "cancelled"), discard: { _ in }) {
            () throws(Refused) -> Int in 42
        }
        #expect(value == 42)
        await #expect(throws: Refused(reason: "no")) {
            try await onOwnThread(named: "refusal", abandonedOnCancel: Refused(reason: "cancelled"), discard: { _ in }) {
                () throws(Refused) -> Int in throw Refused(reason: "no")
            }
        }
    }

    @Test("a cancelled caller stops waiting for work that blocks; what the work returns later is discarded")
    func cancelledWhileBlocked() async throws {
        let gate = Gate()
        let caller = Task {
            try await onOwnThread(named: "blocked", abandonedOnCancel: Refused(reason: "cancelled"), discard: gate.discard) {
                () throws(Refused) -> Int in
                gate.pass()
                return 7
            }
        }
        try await eventually("the work blocks on its thread") { gate.hasArrived }
        caller.cancel()
        // The work is still blocked: only the cancellation can end the caller's wait.
        let result = try await withinHangBound("the cancelled caller") { await caller.result }
        #expect(throws: Refused(reason: "cancelled")) { try result.get() }
        #expect(gate.discardedValues.isEmpty)
        gate.open()
        try await eventually("the late result discarded") { gate.discardedValues == [7] }
    }

    @Test("a caller cancelled before the call never starts the work")
    func cancelledBefore() async throws {
        let started = Flag()
        let caller = Task {
            try? await Task.sleep(for: HangBound.duration)  // ends when the task is cancelled
            return try await onOwnThread(named: "never", abandonedOnCancel: Refused(reason: "cancelled"), discard: { _ in }) {
                () throws(Refused) -> Int in
                started.raise()
                return 1
            }
        }
        caller.cancel()
        await #expect(throws: Refused(reason: "cancelled")) { try await caller.value }
        #expect(!started.isRaised)
    }
}
