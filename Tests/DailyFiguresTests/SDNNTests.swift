@testable import DailyFigures
import TestSupport
import Testing

// MARK: - Hand-made cases

private let windowLength: Int64 = 5 * minute
/// Start of a clock-aligned window.
private let windowStart: Int64 = 5_700_000 * windowLength

/// Back-to-back intervals, the first ending at `firstEnd`; a length that is
/// not a finite number takes no time.
private func beats(firstEnd: Int64, _ milliseconds: [Double]) -> [BeatInterval] {
    func duration(_ length: Double) -> Int64 { length.isFinite ? Int64((length * 1000).rounded()) : 0 }
    var end = firstEnd - duration(milliseconds.first ?? 0)
    return milliseconds.map { length in
        let start = end
        end += duration(length)
        return BeatInterval(start: start, end: end, milliseconds: length)
    }
}

/// Back-to-back intervals starting at the window's start.
private func beats(_ milliseconds: [Double]) -> [BeatInterval] {
    beats(firstEnd: windowStart + Int64((milliseconds.first ?? 0) * 1000), milliseconds)
}

private func repeated(_ milliseconds: Double, _ count: Int) -> [Double] {
    Array(repeating: milliseconds, count: count)
}

@Test func noIntervalsGiveNoFigure() {
    var accumulator = SDNNAccumulator()
    #expect(accumulator.finish() == nil)
    #expect(SDNNWindow.windows(from: []).isEmpty)
}

@Test func coverageOfExactly240000MillisecondsIsEnough() {
    #expect(
        SDNNWindow.windows(from: beats(repeated(2000, 120)))
            == [SDNNWindow(windowStart: windowStart, intervalCount: 120, meanNNMilliseconds: 2000, sdnnMilliseconds: 0)]
    )
    #expect(SDNNWindow.windows(from: beats(repeated(2000, 119))).isEmpty)
}

/// With 2000 ms the longest NN interval, coverage alone demands 120
/// intervals, so the count rule is checked with coverage set aside.
@Test(arguments: [(100, true), (99, false)])
func oneHundredIntervalsAreEnough(count: Int, hasFigure: Bool) {
    var accumulator = SDNNAccumulator(minimumIntervalCount: 100, minimumCoveredMilliseconds: 0)
    for interval in beats(repeated(1000, count)) {
        #expect(accumulator.add(interval) == nil)
    }
    let figure = accumulator.finish()
    #expect((figure != nil) == hasFigure)
    #expect(figure?.intervalCount == (hasFigure ? count : nil))
}

/// Each window falls 240 ms short of the coverage needed without its last
/// interval, so it has a figure exactly when that interval is kept.
@Test(arguments: [(300.0, true), (299.9, false), (2000.0, true), (2000.1, false)])
func nnIntervalsRunFrom300To2000Milliseconds(lastInterval: Double, kept: Bool) {
    let others = lastInterval < 1000 ? repeated(1620, 148) : repeated(1600, 149)
    let all = others + [lastInterval]
    let figures = SDNNWindow.windows(from: beats(all))
    #expect(figures.count == (kept ? 1 : 0))
    if kept {
        #expect(figures.first?.intervalCount == all.count)
        #expect(abs((figures.first?.meanNNMilliseconds ?? 0) - all.reduce(0, +) / Double(all.count)) <= 1e-9)
    }
}

@Test func artefactsAreLeftOutOfTheFigure() {
    var lengths = repeated(1600, 150)
    lengths.insert(contentsOf: [299.9, 2000.1, 100, 5000, -.infinity, .nan], at: 40)
    #expect(
        SDNNWindow.windows(from: beats(lengths))
            == [SDNNWindow(windowStart: windowStart, intervalCount: 150, meanNNMilliseconds: 1600, sdnnMilliseconds: 0)]
    )
}

@Test func sdnnIsTheSampleStandardDeviation() {
    let lengths = (0..<300).map { $0.isMultiple(of: 2) ? 800.0 : 1000.0 }
    let figure = SDNNWindow.windows(from: beats(lengths)).first
    #expect(figure?.intervalCount == 300)
    #expect(figure?.meanNNMilliseconds == 900)
    #expect(abs((figure?.sdnnMilliseconds ?? 0) - 100 * (300.0 / 299.0).squareRoot()) <= 1e-9)
}

/// 120 intervals of 2000 ms, the first ending at the window's start or 1 µs
/// before it; only in the first case does the window hold all 120.
@Test(arguments: [(Int64(0), true), (Int64(-1), false)])
func intervalBelongsToTheWindowHoldingItsEnd(firstEndOffset: Int64, windowHasFigure: Bool) {
    let figures = SDNNWindow.windows(from: beats(firstEnd: windowStart + firstEndOffset, repeated(2000, 120)))
    #expect(figures.map(\.windowStart) == (windowHasFigure ? [windowStart] : []))
}

@Test func windowFinishesWhenAnIntervalEndsInALaterWindow() {
    var accumulator = SDNNAccumulator()
    for interval in beats(repeated(1600, 150)) {
        #expect(accumulator.add(interval) == nil)
    }
    let artefactInNextWindow = BeatInterval(start: windowStart + windowLength, end: windowStart + windowLength + 50_000, milliseconds: 50)
    #expect(accumulator.add(artefactInNextWindow)?.windowStart == windowStart)
    #expect(accumulator.finish() == nil)
}

@Test func windowsAfterAGapAreSeparate() {
    let first = beats(repeated(1600, 150))
    let later = beats(firstEnd: windowStart + 3 * windowLength + 1000, repeated(1000, 280))
    #expect(SDNNWindow.windows(from: first + later).map(\.windowStart) == [windowStart, windowStart + 3 * windowLength])
}

/// The late interval would complete the open window's coverage if it were
/// wrongly added there.
@Test func intervalEndingInAFinishedWindowIsIgnored() {
    var accumulator = SDNNAccumulator()
    let late = BeatInterval(start: windowStart + 2 * second, end: windowStart + 4 * second, milliseconds: 2000)
    #expect(accumulator.add(BeatInterval(start: windowStart, end: windowStart + 2 * second, milliseconds: 2000)) == nil)
    for interval in beats(firstEnd: windowStart + windowLength, repeated(2000, 119)) {
        #expect(accumulator.add(interval) == nil)
    }
    #expect(accumulator.add(late) == nil)
    #expect(accumulator.finish() == nil)
}

@Test func windowsBeforeTheEpochAreClockAligned() {
    let figures = SDNNWindow.windows(from: beats(firstEnd: -windowLength + 2000 * 1000, repeated(2000, 120)))
    #expect(figures.map(\.windowStart) == [-windowLength])
}

// MARK: - Property tests against a brute-force version

/// Several windows of beats with drifting rates, artefacts, and gaps after
/// which the next interval often ends exactly on a window's start.
private struct BeatCase {
    var intervals: [BeatInterval]

    init(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        var end = random.int(in: 5_000_000...5_500_000) * windowLength + random.int(in: 0...windowLength)
        let stop = end + random.int(in: 2...6) * windowLength
        var typical = random.double(in: 330...1900)
        let spread = random.double(in: 5...150)
        let gapChance = random.double(in: 0...0.006)
        let artefactChance = random.double(in: 0...0.06)
        let artefacts: [Double] = [0, 100, 250, 299.9, 299.999, 300, 2000, 2000.001, 2000.1, 2600, 4000]
        intervals = []
        while end < stop {
            var snapToWindow = false
            if random.chance(gapChance) {
                end += random.int(in: second...(200 * second))
                snapToWindow = random.chance(0.5)
            }
            typical = min(1950, max(330, typical + random.double(in: -8...8)))
            var length = random.chance(artefactChance) ? random.pick(artefacts) : typical + random.double(in: -spread...spread)
            if random.chance(0.3) { length = (length * 10).rounded() / 10 }
            let micros = Int64((length * 1000).rounded())
            end = snapToWindow ? (end / windowLength + 1) * windowLength : end + max(micros, 1)
            intervals.append(BeatInterval(start: end - micros, end: end, milliseconds: length))
        }
    }
}

/// The rules of the brute-force version; the sensitivity test bends them.
struct NaiveSDNNRules: Sendable, CustomTestStringConvertible {
    var name = "as specified"
    var minimumCount = 100
    var minimumCovered = 240_000.0
    var isNN: @Sendable (Double) -> Bool = { $0 >= 300 && $0 <= 2000 }
    /// Whether an interval ending at `end` belongs to the window starting at `start`.
    var belongs: @Sendable (_ end: Int64, _ start: Int64) -> Bool = { end, start in end >= start && end < start + windowLength }
    var divisorShortfall = 1

    var testDescription: String { name }
}

/// For each window from the first to the last, scans every interval, then
/// takes the mean and the squared deviations in two passes.
private func naiveSDNN(_ beats: BeatCase, rules: NaiveSDNNRules = NaiveSDNNRules()) -> [SDNNWindow] {
    guard let first = beats.intervals.first, let last = beats.intervals.last else { return [] }
    var figures: [SDNNWindow] = []
    var start = first.end / windowLength * windowLength - windowLength
    while start <= last.end {
        let lengths = beats.intervals.filter { rules.belongs($0.end, start) }.map(\.milliseconds).filter(rules.isNN)
        let covered = lengths.reduce(0, +)
        if lengths.count >= rules.minimumCount && covered >= rules.minimumCovered {
            let mean = covered / Double(lengths.count)
            let squares = lengths.map { ($0 - mean) * ($0 - mean) }.reduce(0, +)
            let deviation = (squares / Double(lengths.count - rules.divisorShortfall)).squareRoot()
            figures.append(SDNNWindow(windowStart: start, intervalCount: lengths.count, meanNNMilliseconds: mean, sdnnMilliseconds: deviation))
        }
        start += windowLength
    }
    return figures
}

private func sdnnFiguresAgree(_ lhs: [SDNNWindow], _ rhs: [SDNNWindow]) -> Bool {
    lhs.count == rhs.count && zip(lhs, rhs).allSatisfy { lhs, rhs in
        lhs.windowStart == rhs.windowStart && lhs.intervalCount == rhs.intervalCount
            && abs(lhs.meanNNMilliseconds - rhs.meanNNMilliseconds) <= 1e-9
            && abs(lhs.sdnnMilliseconds - rhs.sdnnMilliseconds) <= 1e-9
    }
}

/// Runs the accumulator with the given thresholds, feeding intervals one at a time.
private func computed(_ beats: BeatCase, rules: NaiveSDNNRules = NaiveSDNNRules()) -> [SDNNWindow] {
    var accumulator = SDNNAccumulator(minimumIntervalCount: rules.minimumCount, minimumCoveredMilliseconds: rules.minimumCovered)
    var figures = beats.intervals.compactMap { accumulator.add($0) }
    if let last = accumulator.finish() { figures.append(last) }
    return figures
}

@Test func sdnnMatchesBruteForce() {
    var windowsWithFigure = 0
    var windowsWithout = 0
    for seed in propertySeeds {
        let beats = BeatCase(seed: seed)
        let expected = naiveSDNN(beats)
        let actual = SDNNWindow.windows(from: beats.intervals)
        #expect(sdnnFiguresAgree(actual, expected), "seed \(seed): got \(actual), brute force \(expected)")
        windowsWithFigure += expected.count
        windowsWithout += Set(beats.intervals.map { $0.end / windowLength }).count - expected.count
    }
    #expect(windowsWithFigure > 200 && windowsWithout > 200, "\(windowsWithFigure) windows with a figure, \(windowsWithout) without")
}

/// The same comparison with the coverage rule set aside, so the count rule decides.
@Test func sdnnCountRuleMatchesBruteForce() {
    let countOnly = NaiveSDNNRules(minimumCovered: 0)
    for seed in propertySeeds {
        let beats = BeatCase(seed: seed)
        let expected = naiveSDNN(beats, rules: countOnly)
        let actual = computed(beats, rules: countOnly)
        #expect(sdnnFiguresAgree(actual, expected), "seed \(seed): got \(actual), brute force \(expected)")
    }
}

@Test(arguments: [
    NaiveSDNNRules(name: "299.9 ms counted", isNN: { $0 >= 299.9 && $0 <= 2000 }),
    NaiveSDNNRules(name: "300 ms skipped", isNN: { $0 > 300 && $0 <= 2000 }),
    NaiveSDNNRules(name: "2000 ms skipped", isNN: { $0 >= 300 && $0 < 2000 }),
    NaiveSDNNRules(name: "2000.1 ms counted", isNN: { $0 >= 300 && $0 <= 2000.1 }),
    NaiveSDNNRules(name: "window holds ends in (k·300 s, (k+1)·300 s]", belongs: { end, start in end > start && end <= start + windowLength }),
    NaiveSDNNRules(name: "dividing by n", divisorShortfall: 0),
    NaiveSDNNRules(name: "coverage of 239 000 ms", minimumCovered: 239_000),
    NaiveSDNNRules(name: "coverage of 241 000 ms", minimumCovered: 241_000),
])
func sdnnPropertyTestNoticesAnOffByOne(rules: NaiveSDNNRules) {
    let noticed = propertySeeds.contains { seed in
        let beats = BeatCase(seed: seed)
        return !sdnnFiguresAgree(SDNNWindow.windows(from: beats.intervals), naiveSDNN(beats, rules: rules))
    }
    #expect(noticed, "no seed tells '\(rules.name)' from the method")
}

@Test(arguments: [99, 101])
func sdnnCountRuleTestNoticesAnOffByOne(minimumCount: Int) {
    let countOnly = NaiveSDNNRules(minimumCovered: 0)
    var bent = countOnly
    bent.minimumCount = minimumCount
    let noticed = propertySeeds.contains { seed in
        let beats = BeatCase(seed: seed)
        return !sdnnFiguresAgree(computed(beats, rules: countOnly), naiveSDNN(beats, rules: bent))
    }
    #expect(noticed, "no seed tells a minimum of \(minimumCount) intervals from the method")
}
