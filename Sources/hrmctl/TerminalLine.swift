import Foundation
import Synchronization

/// One line the user types on standard input (a confirmation), read on a thread of its own so
/// that no thread of the cooperative pool waits for the user. A caller that is cancelled stops
/// waiting at once and gets no answer; the reading thread then ends with the process.
enum TerminalLine {
    /// The next line of standard input without its newline; nil at its end, or when the
    /// calling task is cancelled.
    static func read() async -> String? {
        let answer = Answer()
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<String?, Never>) in
                guard answer.register(continuation) else { return }
                let thread = Thread { answer.give(readLine()) }
                thread.name = "hrmctl-stdin"
                thread.start()
            }
        } onCancel: {
            answer.give(nil)
        }
    }

    /// Where the line and the caller meet: whichever of the line and the cancellation comes
    /// first resumes the caller, once.
    private final class Answer: Sendable {
        private enum State {
            case starting
            case awaited(CheckedContinuation<String?, Never>)
            case given
        }

        private let state = Mutex(State.starting)

        /// The caller waits on `continuation`; false (and `continuation` resumed with no
        /// answer) when it was cancelled already, so nothing is read.
        func register(_ continuation: CheckedContinuation<String?, Never>) -> Bool {
            let cancelled = state.withLock { state -> Bool in
                guard case .starting = state else { return true }
                state = .awaited(continuation)
                return false
            }
            if cancelled { continuation.resume(returning: nil) }
            return !cancelled
        }

        /// The answer, or nil for a cancelled caller: to the caller unless it has one already.
        func give(_ line: String?) {
            let waiting = state.withLock { state -> CheckedContinuation<String?, Never>? in
                defer { state = .given }
                guard case .awaited(let continuation) = state else { return nil }
                return continuation
            }
            waiting?.resume(returning: line)
        }
    }
}
