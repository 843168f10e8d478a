@preconcurrency import Glibc

/// A progress bar on stderr, shown only when stderr is a terminal and the work is large.
struct ProgressLine {
    private let label: String
    private let total: Int
    private let enabled: Bool
    private var lastDraw = ContinuousClock.now
    private var shown = false

    init(label: String, total: Int) {
        self.label = label
        self.total = total
        enabled = isatty(STDERR_FILENO) == 1 && total > 1 << 20
    }

    mutating func update(_ done: Int) {
        guard enabled, ContinuousClock.now - lastDraw > .milliseconds(200) else { return }
        lastDraw = .now
        let fraction = min(1, Double(done) / Double(max(total, 1)))
        let width = 30
        let filled = Int(fraction * Double(width))
        let bar = String(repeating: "#", count: filled) + String(repeating: " ", count: width - filled)
        fputs("\r\(label) [\(bar)] \(Int(fraction * 100))%", stderr)
        shown = true
    }

    /// Removes the bar before other output.
    mutating func clear() {
        guard shown else { return }
        fputs("\r\u{1B}[K", stderr)
        shown = false
    }

    mutating func finish() { clear() }
}
