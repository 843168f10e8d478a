@preconcurrency import Glibc
import Foundation
import HealthStore
import HealthWire
import Synchronization

/// Reads the JSON Lines of `SampleRecord` that QuerySamplesToFile writes into a pipe, on a
/// thread of its own, while the call runs: the service can write more than a pipe holds, so
/// reading only after the reply would block both sides. Each sample goes to `body` as soon
/// as its line is complete, so nothing accumulates. Owns the read end.
final class SampleLineReader: @unchecked Sendable {
    private struct State {
        var stopRequested = false
        var replied = false
        var outcome: Result<Int, HealthServiceError>?
        var waiter: CheckedContinuation<Result<Int, HealthServiceError>, Never>?
    }

    /// After the reply, the service has closed its end: the rest is already in the pipe.
    /// Waiting longer than this for more (or for the end) means something still holds a
    /// write end, and the read stops.
    static let drainLimit: Duration = .seconds(10)

    private let descriptor: Int32
    private let body: @Sendable (StoredSample) -> Void
    private let state = Mutex(State())

    init(descriptor: Int32, body: @escaping @Sendable (StoredSample) -> Void) {
        self.descriptor = descriptor
        self.body = body
    }

    func start() {
        let thread = Thread { [self] in
            let outcome = self.run()
            close(self.descriptor)
            let waiter = state.withLock { state -> CheckedContinuation<Result<Int, HealthServiceError>, Never>? in
                state.outcome = outcome
                defer { state.waiter = nil }
                return state.waiter
            }
            waiter?.resume(returning: outcome)
        }
        thread.name = "hrmd-samples"
        thread.start()
    }

    /// The call was answered: read what is left, then end.
    func callReplied() { state.withLock { $0.replied = true } }

    /// The call failed: stop reading now.
    func stop() { state.withLock { $0.stopRequested = true } }

    /// How many samples went to `body`, or why reading failed; waits for the thread to end.
    func finished() async -> Result<Int, HealthServiceError> {
        await withCheckedContinuation { continuation in
            let done = state.withLock { state -> Result<Int, HealthServiceError>? in
                if let outcome = state.outcome { return outcome }
                state.waiter = continuation
                return nil
            }
            if let done { continuation.resume(returning: done) }
        }
    }

    private func run() -> Result<Int, HealthServiceError> {
        let decoder = JSONDecoder()
        var pending: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        var count = 0
        var quietSince: ContinuousClock.Instant?

        func take(_ line: ArraySlice<UInt8>) -> HealthServiceError? {
            guard line.contains(where: { $0 != 0x20 && $0 != 0x0D && $0 != 0x09 }) else { return nil }
            do {
                let record = try decoder.decode(SampleRecord.self, from: Data(line))
                body(try record.storedSample())
                count += 1
                return nil
            } catch {
                return .other("QuerySamplesToFile: sample line \(count + 1) is not readable: \(error)")
            }
        }

        while true {
            let (stop, replied) = state.withLock { ($0.stopRequested, $0.replied) }
            if stop { return .success(count) }
            var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, 200)
            if ready < 0 {
                if errno == EINTR { continue }
                return .failure(.other("QuerySamplesToFile: poll on the sample pipe failed: \(String(cString: strerror(errno)))"))
            }
            if ready == 0 {
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
                if let error = take(pending[...]) { return .failure(error) }
                return .success(count)
            }
            pending.append(contentsOf: buffer[0..<got])
            var lineStart = pending.startIndex
            while let newline = pending[lineStart...].firstIndex(of: 0x0A) {
                if let error = take(pending[lineStart..<newline]) { return .failure(error) }
                lineStart = newline + 1
            }
            pending.removeSubrange(pending.startIndex..<lineStart)
        }
    }
}
