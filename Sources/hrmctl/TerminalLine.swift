import ReaderThreads

/// One line the user types on standard input (a confirmation), read on a thread of its own so
/// that no thread of the cooperative pool waits for the user. A caller that is cancelled stops
/// waiting at once and gets no answer; the reading thread then ends with the process.
enum TerminalLine {
    /// The next line of standard input without its newline; nil at its end, or when the
    /// calling task is cancelled.
    static func read() async -> String? {
        try? await onOwnThread(named: "hrmctl-stdin", abandonedOnCancel: CancellationError(), discard: { _ in }) {
            () throws(CancellationError) -> String? in readLine()
        }
    }
}
