/// A stretch of time whose heart-rate readings are not resting readings,
/// such as a workout.
public struct ExcludedInterval: Sendable, Hashable {
    /// First instant of the interval, included.
    public var start: Microseconds
    /// End of the interval, not included, before any recovery time is added.
    public var end: Microseconds

    /// Creates the interval `[start, end)`.
    public init(start: Microseconds, end: Microseconds) {
        self.start = start
        self.end = end
    }
}

/// The resting heart rate of one person for one local day.
///
/// The day is `[dayStart, dayEnd)`. The figure is computed as follows.
///
/// 1. **Counted readings.** A reading counts when its `start` lies in
///    `[dayStart, dayEnd)` and not in any extended exclusion. Each excluded
///    interval `[start, end)` is extended by 30 minutes of recovery, giving
///    `[start, end + 30 min)`: a reading starting exactly at `start` is
///    excluded, one starting exactly at `end + 30 min` counts.
/// 2. **Windows.** The day is cut into 5-minute windows aligned to
///    `dayStart`: window `k` is `[dayStart + k·300 s, dayStart + (k+1)·300 s)`.
///    A final window shorter than 5 minutes (when the day's length is not a
///    multiple of 5 minutes) is ignored, together with its readings. A
///    reading belongs to the window that holds its `start`.
/// 3. **Covered seconds.** A reading's second is
///    `(start − dayStart) / 1 000 000`, rounded down, so seconds are counted
///    from `dayStart`, not from the epoch. A window's covered seconds are the
///    distinct seconds that hold the start of at least one counted reading
///    (several readings in one second cover it once). A window has 300.
/// 4. **Qualifying windows.** A window qualifies when at least 240 of its
///    seconds are covered.
/// 5. **Level.** A qualifying window's level is the arithmetic mean of the
///    beats per minute of all its counted readings.
/// 6. **Figure.** When at least 12 windows qualify (an hour of covered
///    rest), the resting heart rate is the lowest level among them; when
///    several windows share that level, the earliest is reported. With fewer
///    than 12 qualifying windows there is no figure.
public struct RestingHeartRate: Sendable, Hashable {
    /// The resting heart rate in beats per minute: the lowest level among the
    /// qualifying windows.
    public var beatsPerMinute: Double
    /// Start of the window whose level is the resting heart rate.
    public var windowStart: Microseconds
    /// How many of the day's windows qualified.
    public var qualifyingWindowCount: Int

    /// Creates a resting heart rate from its parts.
    public init(beatsPerMinute: Double, windowStart: Microseconds, qualifyingWindowCount: Int) {
        self.beatsPerMinute = beatsPerMinute
        self.windowStart = windowStart
        self.qualifyingWindowCount = qualifyingWindowCount
    }

    /// Length of one window: 5 minutes.
    public static let windowLength: Microseconds = 5 * Span.minute
    /// Covered seconds a window needs to qualify: 240 of its 300.
    public static let minimumCoveredSeconds = 240
    /// Qualifying windows a day needs to have a figure: 12, an hour.
    public static let minimumQualifyingWindows = 12
    /// Recovery time added after the end of each excluded interval: 30 minutes.
    public static let recoveryAfterExclusion: Microseconds = 30 * Span.minute

    /// Computes the resting heart rate of the day `[dayStart, dayEnd)` by the
    /// method described on ``RestingHeartRate``.
    ///
    /// - Parameters:
    ///   - dayStart: First instant of the local day, included.
    ///   - dayEnd: End of the local day, not included.
    ///   - readings: The day's heart-rate readings, with readings taken
    ///     without skin contact already removed. Readings outside the day are
    ///     ignored. The result does not depend on their order, except for the
    ///     last bits of floating-point rounding in each mean.
    ///   - exclusions: Intervals, such as workouts, whose readings and the
    ///     30 minutes after them do not count.
    /// - Returns: The figure, or `nil` when fewer than 12 windows qualify.
    public static func compute(
        dayStart: Microseconds,
        dayEnd: Microseconds,
        readings: [HeartRateReading],
        exclusions: [ExcludedInterval]
    ) -> RestingHeartRate? {
        var accumulator = RestingHeartRateAccumulator(dayStart: dayStart, dayEnd: dayEnd, exclusions: exclusions)
        for reading in readings {
            accumulator.add(reading)
        }
        return accumulator.finish()
    }
}

/// Computes a ``RestingHeartRate`` from readings fed one at a time.
///
/// Create one per day, call ``add(_:)`` for each reading, then ``finish()``.
/// Memory holds the exclusions, and a few numbers and 300 bits per 5-minute
/// window of the day, however many readings are fed. Readings may come in
/// any order.
public struct RestingHeartRateAccumulator: Sendable {
    /// First instant of the day; windows and seconds are counted from here.
    private let dayStart: Microseconds
    /// End of the last whole window; readings from here on are ignored.
    private let wholeWindowsEnd: Microseconds
    /// The excluded intervals with their recovery time added.
    private let excludedRanges: [Range<Microseconds>]
    /// What each whole window has received, by window index.
    private var windows: [RestingWindowTally]
    /// Seconds of the day, counted from `dayStart`, holding a counted reading.
    private var coveredSeconds: SecondSet

    /// Prepares to compute the resting heart rate of the day
    /// `[dayStart, dayEnd)`, not counting readings that start in any of
    /// `exclusions` or in the 30 minutes after one ends.
    public init(dayStart: Microseconds, dayEnd: Microseconds, exclusions: [ExcludedInterval]) {
        let windowLength = RestingHeartRate.windowLength
        let windowCount = dayEnd > dayStart ? Int((dayEnd - dayStart) / windowLength) : 0
        self.dayStart = dayStart
        self.wholeWindowsEnd = dayStart + Int64(windowCount) * windowLength
        self.excludedRanges = exclusions.compactMap { exclusion in
            let end = clampedSum(exclusion.end, RestingHeartRate.recoveryAfterExclusion)
            return exclusion.start < end ? exclusion.start..<end : nil
        }
        self.windows = Array(repeating: RestingWindowTally(), count: windowCount)
        self.coveredSeconds = SecondSet(capacity: windowCount * Int(windowLength / Span.second))
    }

    /// Adds one reading. Readings outside the day's whole windows, or
    /// starting in an extended exclusion, are ignored.
    public mutating func add(_ reading: HeartRateReading) {
        guard reading.start >= dayStart, reading.start < wholeWindowsEnd else { return }
        guard !excludedRanges.contains(where: { $0.contains(reading.start) }) else { return }
        let offset = reading.start - dayStart
        let windowIndex = Int(offset / RestingHeartRate.windowLength)
        if coveredSeconds.insert(Int(offset / Span.second)) {
            windows[windowIndex].coveredSeconds += 1
        }
        windows[windowIndex].beatsPerMinute.add(reading.beatsPerMinute)
    }

    /// The resting heart rate of the readings added so far, or `nil` when
    /// fewer than 12 windows qualify.
    public func finish() -> RestingHeartRate? {
        var qualifyingWindowCount = 0
        var lowest: (level: Double, windowIndex: Int)?
        for (windowIndex, window) in windows.enumerated()
        where window.coveredSeconds >= RestingHeartRate.minimumCoveredSeconds {
            qualifyingWindowCount += 1
            guard let level = window.beatsPerMinute.mean else { continue }
            if let current = lowest, current.level <= level { continue }
            lowest = (level, windowIndex)
        }
        guard qualifyingWindowCount >= RestingHeartRate.minimumQualifyingWindows, let lowest else {
            return nil
        }
        return RestingHeartRate(
            beatsPerMinute: lowest.level,
            windowStart: dayStart + Int64(lowest.windowIndex) * RestingHeartRate.windowLength,
            qualifyingWindowCount: qualifyingWindowCount
        )
    }
}

/// What one 5-minute window of the day has received so far.
struct RestingWindowTally: Sendable {
    /// Distinct seconds of the window holding the start of a counted reading.
    var coveredSeconds = 0
    /// Mean beats per minute of the window's counted readings.
    var beatsPerMinute = RunningMean()
}

/// A set of small non-negative integers, one bit each.
struct SecondSet: Sendable {
    private var words: [UInt64]

    /// Creates an empty set able to hold `0..<capacity`.
    init(capacity: Int) {
        words = Array(repeating: 0, count: (capacity + 63) / 64)
    }

    /// Inserts `member`, returning `true` when it was not yet in the set.
    mutating func insert(_ member: Int) -> Bool {
        let bit: UInt64 = 1 << UInt64(member % 64)
        let index = member / 64
        guard words[index] & bit == 0 else { return false }
        words[index] |= bit
        return true
    }
}
