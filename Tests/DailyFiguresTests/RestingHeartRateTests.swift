import DailyFigures
import TestSupport
import Testing

// MARK: - Hand-made cases

/// A day starting on a whole second, so seconds from the day's start and
/// from the epoch coincide unless a test shifts it.
private let dayStart: Int64 = 1_700_000_000 * second
private let windowLength: Int64 = 5 * minute

private func windowStart(_ index: Int64, dayStart: Int64 = dayStart) -> Int64 {
    dayStart + index * windowLength
}

/// One reading per second of window `index`, at each of `seconds`.
private func readings(
    window index: Int64,
    seconds: Range<Int64> = 0..<300,
    bpm: Double,
    dayStart: Int64 = dayStart
) -> [HeartRateReading] {
    seconds.map { HeartRateReading(start: windowStart(index, dayStart: dayStart) + $0 * second, beatsPerMinute: bpm) }
}

/// Fully covered windows `indices`, all at `bpm`.
private func fullWindows(_ indices: Range<Int64>, bpm: Double) -> [HeartRateReading] {
    indices.flatMap { readings(window: $0, bpm: bpm) }
}

private func restingHeartRate(
    windows windowCount: Int64 = 30,
    _ readings: [HeartRateReading],
    exclusions: [ExcludedInterval] = []
) -> RestingHeartRate? {
    RestingHeartRate.compute(
        dayStart: dayStart,
        dayEnd: windowStart(windowCount),
        readings: readings.sorted { $0.start < $1.start },
        exclusions: exclusions
    )
}

@Test func dayWithoutReadingsHasNoRestingHeartRate() {
    #expect(restingHeartRate([]) == nil)
    #expect(RestingHeartRate.compute(dayStart: dayStart, dayEnd: dayStart, readings: [], exclusions: []) == nil)
}

@Test func twelveQualifyingWindowsGiveTheLowestLevel() {
    var day = fullWindows(0..<7, bpm: 60) + fullWindows(8..<12, bpm: 62)
    day += readings(window: 7, bpm: 55)
    let figure = restingHeartRate(day)
    #expect(figure == RestingHeartRate(beatsPerMinute: 55, windowStart: windowStart(7), qualifyingWindowCount: 12))
}

@Test func elevenQualifyingWindowsGiveNone() {
    let day = fullWindows(0..<11, bpm: 60) + readings(window: 11, seconds: 0..<239, bpm: 50)
    #expect(restingHeartRate(day) == nil)
}

@Test(arguments: [(240, 50.0, 13), (239, 60.0, 12)])
func windowQualifiesFromTwoHundredFortyCoveredSeconds(coveredSeconds: Int64, expectedBPM: Double, expectedCount: Int) {
    let day = fullWindows(0..<12, bpm: 60) + readings(window: 12, seconds: 0..<coveredSeconds, bpm: 50)
    let figure = restingHeartRate(day)
    #expect(figure?.beatsPerMinute == expectedBPM)
    #expect(figure?.qualifyingWindowCount == expectedCount)
}

@Test func severalReadingsInOneSecondCoverItOnce() {
    let quarterSeconds = (0..<(239 * 4)).map {
        HeartRateReading(start: windowStart(12) + Int64($0) * second / 4, beatsPerMinute: 50)
    }
    let figure = restingHeartRate(fullWindows(0..<12, bpm: 60) + quarterSeconds)
    #expect(figure == RestingHeartRate(beatsPerMinute: 60, windowStart: windowStart(0), qualifyingWindowCount: 12))
}

/// With the day starting 0.6 s past a whole second, a reading 0.2 s after
/// another can fall in a new second of the epoch but in the same second of
/// the day; only the day's seconds count.
@Test(arguments: [(238 * second + 500_000, false), (239 * second, true)])
func secondsAreCountedFromTheDayStart(extraReadingOffset: Int64, windowQualifies: Bool) {
    let shiftedStart = dayStart + 600_000
    let fullDay = (0..<12).flatMap { readings(window: $0, bpm: 60, dayStart: shiftedStart) }
    var testWindow = (0..<239).map {
        HeartRateReading(start: windowStart(12, dayStart: shiftedStart) + $0 * second + 300_000, beatsPerMinute: 50)
    }
    testWindow.append(HeartRateReading(start: windowStart(12, dayStart: shiftedStart) + extraReadingOffset, beatsPerMinute: 50))
    let figure = RestingHeartRate.compute(
        dayStart: shiftedStart,
        dayEnd: windowStart(20, dayStart: shiftedStart),
        readings: (fullDay + testWindow).sorted { $0.start < $1.start },
        exclusions: []
    )
    #expect(figure?.beatsPerMinute == (windowQualifies ? 50 : 60))
    #expect(figure?.qualifyingWindowCount == (windowQualifies ? 13 : 12))
}

@Test func levelIsTheMeanOfTheWindowsReadings() {
    let alternating = (0..<600).map {
        HeartRateReading(start: windowStart(5) + Int64($0) * second / 2, beatsPerMinute: $0.isMultiple(of: 2) ? 50 : 56)
    }
    let figure = restingHeartRate(fullWindows(0..<5, bpm: 60) + alternating + fullWindows(6..<12, bpm: 60))
    #expect(figure == RestingHeartRate(beatsPerMinute: 53, windowStart: windowStart(5), qualifyingWindowCount: 12))
}

@Test func equalLevelsReportTheEarliestWindow() {
    let figure = restingHeartRate(fullWindows(0..<14, bpm: 60))
    #expect(figure == RestingHeartRate(beatsPerMinute: 60, windowStart: windowStart(0), qualifyingWindowCount: 14))
}

/// A workout over windows 10 to 15 excludes them and the 30 minutes after,
/// windows 16 to 21; its low readings would otherwise be the figure.
@Test func workoutExcludesItsTimeAndThirtyMinutesAfter() {
    let workout = ExcludedInterval(start: windowStart(10), end: windowStart(16))
    let excludedEnd = windowStart(22)
    var day = fullWindows(0..<36, bpm: 70).map { reading in
        var reading = reading
        if reading.start >= workout.start && reading.start < excludedEnd { reading.beatsPerMinute = 45 }
        if reading.start >= windowStart(30) && reading.start < windowStart(31) { reading.beatsPerMinute = 65 }
        return reading
    }
    day.sort { $0.start < $1.start }
    #expect(
        restingHeartRate(windows: 36, day, exclusions: [workout])
            == RestingHeartRate(beatsPerMinute: 65, windowStart: windowStart(30), qualifyingWindowCount: 24)
    )
    #expect(
        restingHeartRate(windows: 36, day)
            == RestingHeartRate(beatsPerMinute: 45, windowStart: windowStart(10), qualifyingWindowCount: 36)
    )
}

/// Window 0 holds 240 covered seconds at 50 bpm; windows 10 to 21 are full
/// at 60 bpm. The workout decides whether one reading of window 0 counts.
private func edgeDay(testSeconds: Range<Int64>, workout: ExcludedInterval) -> RestingHeartRate? {
    restingHeartRate(readings(window: 0, seconds: testSeconds, bpm: 50) + fullWindows(10..<22, bpm: 60), exclusions: [workout])
}

@Test func readingAtTheEndOfRecoveryCounts() {
    let endsAtFirstReading = ExcludedInterval(start: dayStart - 60 * minute, end: dayStart + 60 * second - 30 * minute)
    #expect(edgeDay(testSeconds: 60..<300, workout: endsAtFirstReading)?.beatsPerMinute == 50)
}

@Test func readingJustBeforeTheEndOfRecoveryIsExcluded() {
    let endsAfterFirstReading = ExcludedInterval(start: dayStart - 60 * minute, end: dayStart + 60 * second + 1 - 30 * minute)
    #expect(edgeDay(testSeconds: 60..<300, workout: endsAfterFirstReading)?.beatsPerMinute == 60)
}

@Test func readingAtTheStartOfAWorkoutIsExcluded() {
    let startsAtLastReading = ExcludedInterval(start: dayStart + 239 * second, end: dayStart + 240 * second)
    #expect(edgeDay(testSeconds: 0..<240, workout: startsAtLastReading)?.beatsPerMinute == 60)
    let startsAfterLastReading = ExcludedInterval(start: dayStart + 240 * second, end: dayStart + 241 * second)
    #expect(edgeDay(testSeconds: 0..<240, workout: startsAfterLastReading)?.beatsPerMinute == 50)
}

/// The day is 12 windows and 299 seconds long; low readings before the day,
/// in its short last window, at its end and after it are all ignored.
@Test func readingsOutsideTheDaysWholeWindowsAreIgnored() {
    let dayEnd = windowStart(12) + 299 * second
    let inside = fullWindows(0..<3, bpm: 60) + readings(window: 3, bpm: 58) + fullWindows(4..<12, bpm: 60)
    let outside = readings(window: -1, bpm: 30) + readings(window: 12, seconds: 0..<299, bpm: 30)
        + [HeartRateReading(start: dayStart - 1, beatsPerMinute: 30), HeartRateReading(start: dayEnd, beatsPerMinute: 30)]
        + readings(window: 13, bpm: 30)
    let figure = RestingHeartRate.compute(
        dayStart: dayStart,
        dayEnd: dayEnd,
        readings: (inside + outside).sorted { $0.start < $1.start },
        exclusions: []
    )
    #expect(figure == RestingHeartRate(beatsPerMinute: 58, windowStart: windowStart(3), qualifyingWindowCount: 12))
}

@Test func accumulatorDoesNotDependOnReadingOrder() {
    var generator = SplitMix64(seed: 7)
    var day = (0..<14).flatMap { readings(window: $0, bpm: Double(60 + $0 % 5)) }
    let expected = restingHeartRate(day)
    for index in day.indices.reversed() {
        day.swapAt(index, Int(generator.int(in: 0...Int64(index))))
    }
    var accumulator = RestingHeartRateAccumulator(dayStart: dayStart, dayEnd: windowStart(30), exclusions: [])
    day.forEach { accumulator.add($0) }
    #expect(expected != nil)
    #expect(accumulator.finish() == expected)
}

// MARK: - Property tests against a brute-force version

/// One day of pseudo-random readings and workouts.
private struct RestingCase {
    var dayStart: Int64
    var dayEnd: Int64
    var readings: [HeartRateReading]
    var exclusions: [ExcludedInterval]

    init(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        dayStart = 1_600_000_000 * second + random.int(in: 0...(86_400 * second))
        let wholeWindows = random.int(in: 12...28)
        let shortWindow = random.chance(0.3) ? 0 : random.int(in: 1...(windowLength - 1))
        dayEnd = dayStart + wholeWindows * windowLength + shortWindow

        readings = []
        var time = dayStart - random.int(in: 0...(2 * minute))
        let stop = dayEnd + random.int(in: 0...(2 * minute))
        while time < stop {
            if random.chance(0.3) {
                time += random.chance(0.7) ? random.int(in: second...(90 * second)) : random.int(in: minute...(30 * minute))
            }
            let segmentEnd = time + random.int(in: (10 * second)...(30 * minute))
            let hertz = random.double(in: 0.5...4)
            let dropout = random.chance(0.5) ? random.double(in: 0...0.35) : 0
            let typicalBPM = random.double(in: 45...95)
            let wholeBPM = random.chance(0.3)
            while time < segmentEnd && time < stop {
                let bpm = typicalBPM + random.double(in: -3...3)
                if !random.chance(dropout) {
                    readings.append(HeartRateReading(start: time, beatsPerMinute: wholeBPM ? bpm.rounded() : bpm))
                }
                if random.chance(0.02) {
                    readings.append(HeartRateReading(start: time + random.int(in: 0...1000), beatsPerMinute: bpm + 1))
                }
                time += Int64(Double(second) / hertz * random.double(in: 0.7...1.3))
            }
        }

        let firstInstant = dayStart
        exclusions = (0..<random.int(in: 0...2)).map { _ in
            let start = firstInstant + random.int(in: (-40 * minute)...(wholeWindows * windowLength))
            return ExcludedInterval(start: start, end: start + random.int(in: minute...(40 * minute)))
        }
    }
}

/// The rules of the brute-force version, which the sensitivity test bends
/// one at a time to show the property test would notice.
struct NaiveRestingRules: Sendable, CustomTestStringConvertible {
    var name = "as specified"
    var minimumCoveredSeconds = 240
    var minimumQualifyingWindows = 12
    var recovery: Int64 = 30 * minute
    var secondsFromEpoch = false

    var testDescription: String { name }
}

/// For each window, scans every reading and every workout.
private func naiveRestingHeartRate(_ day: RestingCase, rules: NaiveRestingRules = NaiveRestingRules()) -> RestingHeartRate? {
    var levels: [(windowStart: Int64, level: Double)] = []
    var index: Int64 = 0
    while day.dayStart + (index + 1) * windowLength <= day.dayEnd {
        let windowStart = day.dayStart + index * windowLength
        var seconds = Set<Int64>()
        var total = 0.0
        var count = 0
        for reading in day.readings where reading.start >= windowStart && reading.start < windowStart + windowLength {
            let excluded = day.exclusions.contains { workout in
                reading.start >= workout.start && reading.start < workout.end + rules.recovery
            }
            if excluded { continue }
            seconds.insert(rules.secondsFromEpoch ? reading.start / second : (reading.start - day.dayStart) / second)
            total += reading.beatsPerMinute
            count += 1
        }
        if seconds.count >= rules.minimumCoveredSeconds {
            levels.append((windowStart, total / Double(count)))
        }
        index += 1
    }
    guard levels.count >= rules.minimumQualifyingWindows else { return nil }
    var lowest = levels[0]
    for candidate in levels where candidate.level < lowest.level {
        lowest = candidate
    }
    return RestingHeartRate(beatsPerMinute: lowest.level, windowStart: lowest.windowStart, qualifyingWindowCount: levels.count)
}

private func restingFiguresAgree(_ lhs: RestingHeartRate?, _ rhs: RestingHeartRate?) -> Bool {
    guard let lhs, let rhs else { return lhs == nil && rhs == nil }
    return abs(lhs.beatsPerMinute - rhs.beatsPerMinute) <= 1e-9
        && lhs.windowStart == rhs.windowStart
        && lhs.qualifyingWindowCount == rhs.qualifyingWindowCount
}

private func computed(_ day: RestingCase) -> RestingHeartRate? {
    RestingHeartRate.compute(dayStart: day.dayStart, dayEnd: day.dayEnd, readings: day.readings, exclusions: day.exclusions)
}

@Test func restingHeartRateMatchesBruteForce() {
    var figures = 0
    for seed in propertySeeds {
        let day = RestingCase(seed: seed)
        let expected = naiveRestingHeartRate(day)
        let actual = computed(day)
        #expect(restingFiguresAgree(actual, expected), "seed \(seed): got \(String(describing: actual)), brute force \(String(describing: expected))")
        if expected != nil { figures += 1 }
    }
    // Both outcomes must be common, or the comparison proves little.
    #expect(figures > propertySeeds.count / 5 && figures < propertySeeds.count * 4 / 5, "\(figures) days with a figure")
}

@Test(arguments: [
    NaiveRestingRules(name: "239 covered seconds", minimumCoveredSeconds: 239),
    NaiveRestingRules(name: "241 covered seconds", minimumCoveredSeconds: 241),
    NaiveRestingRules(name: "11 qualifying windows", minimumQualifyingWindows: 11),
    NaiveRestingRules(name: "13 qualifying windows", minimumQualifyingWindows: 13),
    NaiveRestingRules(name: "29 minutes of recovery", recovery: 29 * minute),
    NaiveRestingRules(name: "31 minutes of recovery", recovery: 31 * minute),
    NaiveRestingRules(name: "seconds counted from the epoch", secondsFromEpoch: true),
])
func restingPropertyTestNoticesAnOffByOne(rules: NaiveRestingRules) {
    let noticed = propertySeeds.contains { seed in
        let day = RestingCase(seed: seed)
        return !restingFiguresAgree(computed(day), naiveRestingHeartRate(day, rules: rules))
    }
    #expect(noticed, "no seed tells '\(rules.name)' from the method")
}
