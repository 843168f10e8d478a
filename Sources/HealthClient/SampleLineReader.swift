@preconcurrency import Glibc
import HealthRequests
import Foundation
import HealthModel
import HealthWire
import Synchronization

/// Reads the JSON Lines of `SampleRecord` that QuerySamplesToFile writes into a pipe, on a
/// thread of its own, while the call runs: the service can write more than a pipe holds, so
/// reading only after the reply would block both sides. The thread decodes ahead of the task
/// that consumes the samples (`next()`), by at most about `capacity` samples: beyond that it
/// stops reading, so the service's writes wait on the pipe and a year of samples never sits
/// in memory. The thread only ever waits in `poll(2)`, on the pipe and on a wake-up pipe of
/// its own (room again, the reply, a stop); the consuming task never blocks. Owns the read end.
final class SampleLineReader: @unchecked Sendable {
    private struct State {
        var stopRequested = false
        var replied = false
        /// Decoded and not yet taken by `next()`.
        var samples: [StoredSample] = []
        var outcome: Result<Int, HealthServiceError>?
        /// The consumer waiting in `next()` for samples or the end.
        var waiter: CheckedContinuation<[StoredSample]?, Never>?
        /// Whether the thread has stopped reading the pipe until the consumer takes samples.
        var waitingForRoom = false
    }

    /// After the reply, the service has closed its end: the rest is already in the pipe.
    /// Waiting longer than this for more (or for the end) means something still holds a
    /// write end, and the read stops.
    static let drainLimit: Duration = .seconds(10)

    /// How many decoded samples may wait for the consumer before the thread stops reading.
    static let capacity = 16_384

    private let descriptor: Int32
    /// The wake-up pipe, both ends non-blocking: a byte written wakes the thread from
    /// `poll(2)`, which reads whatever is there.
    private let wakeEnds: (read: Int32, write: Int32)
    private let state = Mutex(State())

    /// A reader of `descriptor`, which it owns from here on (also when this throws).
    init(descriptor: Int32) throws(HealthServiceError) {
        var ends: [Int32] = [-1, -1]
        guard systemPipe2(&ends, O_CLOEXEC | O_NONBLOCK) == 0 else {
            let reason = String(cString: strerror(errno))
            close(descriptor)
            throw .other("QuerySamplesToFile: pipe2 failed: \(reason)")
        }
        self.descriptor = descriptor
        wakeEnds = (ends[0], ends[1])
    }

    /// Whether the reader has stopped reading the pipe until the consumer takes samples (its
    /// buffer holds ``capacity``): what a bounded reader comes to when no one consumes.
    var isWaitingForRoom: Bool { state.withLock { $0.waitingForRoom } }

    deinit {
        close(wakeEnds.read)
        close(wakeEnds.write)
    }

    func start() {
        let thread = Thread { [self] in
            let outcome = self.run()
            close(self.descriptor)
            let waiter = state.withLock { state -> CheckedContinuation<[StoredSample]?, Never>? in
                state.outcome = outcome
                // A waiter finds nothing buffered (it would have taken it): the end is its answer.
                defer { state.waiter = nil }
                return state.waiter
            }
            waiter?.resume(returning: nil)
        }
        thread.name = "hrmd-samples"
        thread.start()
    }

    /// The call was answered: read what is left, then end.
    func callReplied() {
        state.withLock { $0.replied = true }
        wake()
    }

    /// The call failed, or its caller gave up: stop reading now.
    func stop() {
        state.withLock { $0.stopRequested = true }
        wake()
    }

    /// The samples decoded since the last call, in order, as soon as there are any; nil once
    /// the reading ended and every sample was taken (`outcome` then says how it ended).
    /// Cancelling the calling task stops the reading.
    func next() async -> [StoredSample]? {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<[StoredSample]?, Never>) in
                let (ready, madeRoom) = state.withLock { state -> ([StoredSample]??, Bool) in
                    if !state.samples.isEmpty {
                        let taken = state.samples
                        state.samples = []
                        return (.some(taken), taken.count >= Self.capacity)
                    }
                    if state.outcome != nil { return (.some(nil), false) }
                    state.waiter = continuation
                    return (nil, false)
                }
                if madeRoom { wake() }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            stop()
        }
    }

    /// How the reading ended: how many samples it decoded, or why it failed. Nil while it runs.
    var outcome: Result<Int, HealthServiceError>? { state.withLock { $0.outcome } }

    /// Wakes the thread (a full pipe already will).
    private func wake() {
        var byte: UInt8 = 1
        _ = write(wakeEnds.write, &byte, 1)
    }

    /// Hands samples to the consumer: to its waiting `next()`, else to the buffer.
    private func deliver(_ decoded: [StoredSample]) {
        guard !decoded.isEmpty else { return }
        let waiter = state.withLock { state -> CheckedContinuation<[StoredSample]?, Never>? in
            guard let waiter = state.waiter else {
                state.samples.append(contentsOf: decoded)
                return nil
            }
            state.waiter = nil
            return waiter
        }
        waiter?.resume(returning: decoded)
    }

    private func run() -> Result<Int, HealthServiceError> {
        let decoder = JSONDecoder()
        var pending: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        var count = 0
        var quietSince: ContinuousClock.Instant?
        var decoded: [StoredSample] = []

        func take(_ line: ArraySlice<UInt8>) -> HealthServiceError? {
            guard line.contains(where: { $0 != 0x20 && $0 != 0x0D && $0 != 0x09 }) else { return nil }
            do {
                let record = try decoder.decode(SampleRecord.self, from: Data(line))
                decoded.append(try record.storedSample())
                count += 1
                return nil
            } catch {
                return .other("QuerySamplesToFile: sample line \(count + 1) is not readable: \(error)")
            }
        }

        /// Delivers what was decoded, then passes `result` on.
        func ending(_ result: Result<Int, HealthServiceError>) -> Result<Int, HealthServiceError> {
            deliver(decoded)
            return result
        }

        while true {
            let (stop, replied, full) = state.withLock { state in
                state.waitingForRoom = state.samples.count >= Self.capacity
                return (state.stopRequested, state.replied, state.waitingForRoom)
            }
            if stop { return .success(count) }
            // With the consumer that far behind, only a wake-up is waited for, not the pipe.
            var entries = [
                pollfd(fd: full ? -1 : descriptor, events: Int16(POLLIN), revents: 0),
                pollfd(fd: wakeEnds.read, events: Int16(POLLIN), revents: 0),
            ]
            let ready = poll(&entries, 2, 200)
            if ready < 0 {
                if errno == EINTR { continue }
                return .failure(.other("QuerySamplesToFile: poll on the sample pipe failed: \(String(cString: strerror(errno)))"))
            }
            if entries[1].revents != 0 {
                var drained = [UInt8](repeating: 0, count: 64)
                while drained.withUnsafeMutableBytes({ read(wakeEnds.read, $0.baseAddress, $0.count) }) > 0 {}
            }
            if full {
                quietSince = nil
                continue
            }
            if entries[0].revents == 0 {
                if replied {
                    let since = quietSince ?? .now
                    quietSince = since
                    if ContinuousClock.now - since > Self.drainLimit {
                        return .failure(.other("QuerySamplesToFile: the sample stream was not closed after the reply"))
                    }
                }
                continue
            }
            quietSince = nil
            let got = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if got < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                return .failure(.other("QuerySamplesToFile: reading the sample pipe failed: \(String(cString: strerror(errno)))"))
            }
            if got == 0 {
                if let error = take(pending[...]) { return ending(.failure(error)) }
                return ending(.success(count))
            }
            pending.append(contentsOf: buffer[0..<got])
            var lineStart = pending.startIndex
            while let newline = pending[lineStart...].firstIndex(of: 0x0A) {
                if let error = take(pending[lineStart..<newline]) { return ending(.failure(error)) }
                lineStart = newline + 1
            }
            pending.removeSubrange(pending.startIndex..<lineStart)
            deliver(decoded)
            decoded.removeAll(keepingCapacity: true)
        }
    }
}
