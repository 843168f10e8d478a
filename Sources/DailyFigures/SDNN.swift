/// The time between two successive heartbeats (an RR interval).
public struct BeatInterval: Sendable, Hashable {
    /// The beat that opens the interval, in microseconds since the Unix epoch.
    /// Not used by the figures; kept so callers can pass intervals as recorded.
    public var start: Microseconds
    /// The beat that closes the interval, in microseconds since the Unix epoch.
    /// An interval belongs to the window holding its end.
    public var end: Microseconds
    /// The length of the interval in milliseconds, as reported by the sensor.
    public var milliseconds: Double

    /// Creates an interval from the beat at `start` to the beat at `end`
    /// lasting `milliseconds`.
    public init(start: Microseconds, end: Microseconds, milliseconds: Double) {
        self.start = start
        self.end = end
        self.milliseconds = milliseconds
    }
}

/// Heart-rate variability (SDNN) over one 5-minute window, from beat
/// intervals only.
///
/// The figure is computed as follows.
///
/// 1. **Windows.** Windows are 5-minute windows aligned to the clock:
///    window `k` is `[k·300 s, (k+1)·300 s)` since the Unix epoch. An
///    interval belongs to the window that holds its `end`, so an interval
///    ending exactly at `k·300 s` belongs to window `k`.
/// 2. **NN intervals.** Intervals of 300 ms to 2000 ms, both included, are
///    normal-to-normal (NN) intervals. Any other interval (including a value
///    that is not a number) is an artefact: it is skipped and counts
///    neither as an interval nor toward coverage.
/// 3. **Sufficiency.** A window has a figure when it holds at least 100 NN
///    intervals whose milliseconds sum to at least 240 000 ms, that is 80 %
///    of the window covered by beats; gaps in recording leave time uncovered.
///    Because an NN interval lasts at most 2000 ms, the coverage rule alone
///    already implies at least 120 intervals.
/// 4. **Figure.** SDNN is the sample standard deviation of the window's NN
///    intervals in milliseconds, dividing by `n − 1`:
///    `sqrt(Σ (xᵢ − mean)² / (n − 1))`. The window's start, the number of NN
///    intervals `n` and their mean are reported with it.
public struct SDNNWindow: Sendable, Hashable {
    /// Start of the window, in microseconds since the Unix epoch; a multiple of 300 s.
    public var windowStart: Microseconds
    /// Number of NN intervals in the window.
    public var intervalCount: Int
    /// Mean length of the window's NN intervals, in milliseconds.
    public var meanNNMilliseconds: Double
    /// Sample standard deviation of the window's NN intervals, in milliseconds.
    public var sdnnMilliseconds: Double

    /// Creates a window figure from its parts.
    public init(windowStart: Microseconds, intervalCount: Int, meanNNMilliseconds: Double, sdnnMilliseconds: Double) {
        self.windowStart = windowStart
        self.intervalCount = intervalCount
        self.meanNNMilliseconds = meanNNMilliseconds
        self.sdnnMilliseconds = sdnnMilliseconds
    }

    /// Length of one window: 5 minutes.
    public static let windowLength: Microseconds = 5 * Span.minute
    /// Interval lengths, in milliseconds, that are NN intervals: 300 ... 2000.
    public static let nnMilliseconds: ClosedRange<Double> = 300...2000
    /// NN intervals a window needs for a figure: 100.
    public static let minimumIntervalCount = 100
    /// Sum of NN milliseconds a window needs for a figure: 240 000 (80 % of 300 s).
    public static let minimumCoveredMilliseconds: Double = 240_000

    /// Computes the figure of every window that has one, in window order, by
    /// the method described on ``SDNNWindow``.
    ///
    /// - Parameter intervals: Beat intervals sorted by `end`. An interval
    ///   ending in an earlier window than some interval before it is ignored.
    public static func windows(from intervals: [BeatInterval]) -> [SDNNWindow] {
        var accumulator = SDNNAccumulator()
        var figures: [SDNNWindow] = []
        for interval in intervals {
            if let figure = accumulator.add(interval) {
                figures.append(figure)
            }
        }
        if let figure = accumulator.finish() {
            figures.append(figure)
        }
        return figures
    }
}

/// Computes ``SDNNWindow`` figures from beat intervals fed one at a time, in
/// order of their `end`.
///
/// Memory holds one window's running totals, however many intervals are fed.
/// A window is finished when an interval (artefact or not) ends in a later
/// window; ``add(_:)`` then returns that window's figure, if it has one.
/// Call ``finish()`` after the last interval for the last window.
public struct SDNNAccumulator: Sendable {
    /// NN intervals a window needs for a figure.
    private let minimumIntervalCount: Int
    /// Sum of NN milliseconds a window needs for a figure.
    private let minimumCoveredMilliseconds: Double
    /// The window of the latest interval, still receiving intervals.
    private var openWindow: NNWindowTally?

    /// Creates an accumulator that has seen no intervals.
    public init() {
        self.init(
            minimumIntervalCount: SDNNWindow.minimumIntervalCount,
            minimumCoveredMilliseconds: SDNNWindow.minimumCoveredMilliseconds
        )
    }

    /// Creates an accumulator with other sufficiency thresholds, so that each
    /// threshold can be checked on its own.
    init(minimumIntervalCount: Int, minimumCoveredMilliseconds: Double) {
        self.minimumIntervalCount = minimumIntervalCount
        self.minimumCoveredMilliseconds = minimumCoveredMilliseconds
    }

    /// Adds one interval.
    ///
    /// - Returns: The figure of the window this interval finishes, when it
    ///   ends in a later window than the previous interval and that window
    ///   has a figure; otherwise `nil`. An interval ending in an earlier
    ///   window than the open one is ignored.
    public mutating func add(_ interval: BeatInterval) -> SDNNWindow? {
        let windowIndex = floorDivide(interval.end, by: SDNNWindow.windowLength)
        var finished: SDNNWindow?
        if let open = openWindow {
            guard windowIndex >= open.windowIndex else { return nil }
            if windowIndex > open.windowIndex {
                finished = figure(of: open)
                openWindow = nil
            }
        }
        if openWindow == nil {
            openWindow = NNWindowTally(windowIndex: windowIndex)
        }
        if SDNNWindow.nnMilliseconds.contains(interval.milliseconds) {
            openWindow?.add(interval.milliseconds)
        }
        return finished
    }

    /// Finishes the window still open and returns its figure, if it has one.
    /// The accumulator is then empty and may be fed later intervals.
    public mutating func finish() -> SDNNWindow? {
        defer { openWindow = nil }
        return openWindow.flatMap(figure(of:))
    }

    private func figure(of window: NNWindowTally) -> SDNNWindow? {
        guard window.count >= minimumIntervalCount,
              window.count >= 2,
              window.totalMilliseconds >= minimumCoveredMilliseconds
        else { return nil }
        return SDNNWindow(
            windowStart: window.windowIndex * SDNNWindow.windowLength,
            intervalCount: window.count,
            meanNNMilliseconds: window.mean,
            sdnnMilliseconds: (window.sumOfSquaredDeviations / Double(window.count - 1)).squareRoot()
        )
    }
}

/// Running totals of the NN intervals of one window, using Welford's
/// updates so the deviation stays accurate without keeping the intervals.
struct NNWindowTally: Sendable {
    /// Index `k` of the window `[k·300 s, (k+1)·300 s)`.
    let windowIndex: Int64
    /// Number of NN intervals added.
    private(set) var count = 0
    /// Sum of the NN intervals, in milliseconds, added in order.
    private(set) var totalMilliseconds: Double = 0
    /// Mean of the NN intervals, in milliseconds.
    private(set) var mean: Double = 0
    /// Sum of squared deviations from the mean, in square milliseconds.
    private(set) var sumOfSquaredDeviations: Double = 0

    init(windowIndex: Int64) {
        self.windowIndex = windowIndex
    }

    /// Adds one NN interval of `milliseconds`.
    mutating func add(_ milliseconds: Double) {
        count += 1
        totalMilliseconds += milliseconds
        let deviationBefore = milliseconds - mean
        mean += deviationBefore / Double(count)
        sumOfSquaredDeviations += deviationBefore * (milliseconds - mean)
    }
}
