import DailyFigures
import Testing

// MARK: - Hand-made cases

/// A workout end deliberately not on a whole second.
private let workoutEnd: Int64 = 1_700_000_123_456_789

private func reading(_ offset: Int64, _ bpm: Double) -> HeartRateReading {
    HeartRateReading(start: workoutEnd + offset, beatsPerMinute: bpm)
}

private func recovery(_ readings: [HeartRateReading]) -> HeartRateRecovery? {
    HeartRateRecovery.oneMinute(workoutEnd: workoutEnd, readings: readings.sorted { $0.start < $1.start })
}

/// Two readings in each span, each exactly on a bound of its span.
private let readingsOnTheBounds = [
    reading(-10 * second, 150), reading(0, 140),
    reading(55 * second, 110), reading(65 * second, 100),
]

@Test func readingsExactlyOnTheSpanBoundsCount() {
    let figure = recovery(readingsOnTheBounds)
    #expect(figure?.atEndBeatsPerMinute == 145)
    #expect(figure?.afterOneMinuteBeatsPerMinute == 105)
    #expect(figure?.dropBeatsPerMinute == 40)
}

@Test func readingsJustOutsideTheSpansAreIgnored() {
    let outside = [
        reading(-10 * second - 1, 999), reading(1, 999),
        reading(55 * second - 1, 999), reading(65 * second + 1, 999),
        reading(-60 * second, 999), reading(30 * second, 999), reading(120 * second, 999),
    ]
    #expect(recovery(readingsOnTheBounds + outside) == HeartRateRecovery(atEndBeatsPerMinute: 145, afterOneMinuteBeatsPerMinute: 105))
}

@Test(arguments: [
    [reading(0, 140), reading(55 * second, 110), reading(65 * second, 100)],
    [reading(-10 * second, 150), reading(0, 140), reading(65 * second, 100)],
    [reading(-10 * second - 1, 150), reading(0, 140), reading(55 * second, 110), reading(65 * second, 100)],
    [reading(-10 * second, 150), reading(0, 140), reading(55 * second, 110), reading(65 * second + 1, 100)],
])
func oneReadingInASpanGivesNone(readings: [HeartRateReading]) {
    #expect(recovery(readings) == nil)
}

@Test func readingsAfterTheWorkoutAloneGiveNone() {
    #expect(recovery([]) == nil)
    #expect(recovery((0..<120).map { reading(Int64($0) * second, 120) }.filter { $0.start > workoutEnd }) == nil)
}

@Test func meansUseEveryReadingInTheirSpan() {
    let atEnd = (0...10).map { reading(Int64(-$0) * second, 140 + Double($0)) }
    let after = (55...65).map { reading(Int64($0) * second, 100 + Double($0 - 55) * 2) }
    let figure = recovery(atEnd + after)
    #expect(figure?.atEndBeatsPerMinute == 145)
    #expect(figure?.afterOneMinuteBeatsPerMinute == 110)
    #expect(figure?.dropBeatsPerMinute == 35)
}

@Test func aRiseIsReportedAsANegativeDrop() {
    let figure = recovery([reading(-5 * second, 100), reading(-1 * second, 100), reading(58 * second, 108), reading(62 * second, 112)])
    #expect(figure?.dropBeatsPerMinute == -10)
}

// MARK: - Property tests against a brute-force version

/// Readings around one workout end, on a grid aligned to the end (so the
/// span bounds are often hit exactly) or at jittered times.
private struct RecoveryCase {
    var workoutEnd: Int64
    var readings: [HeartRateReading]

    init(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        workoutEnd = 1_650_000_000 * second + random.int(in: 0...(86_400 * second))
        readings = []
        let onGrid = random.chance(0.6)
        let gridStep = random.pick([250_000, 500_000, second, 2 * second, 5 * second, 10 * second] as [Int64])
        let hertz = random.double(in: 0.5...4)
        let dropout = random.chance(0.5) ? random.double(in: 0...0.8) : 0
        let typicalBPM = random.double(in: 90...170)
        var time = workoutEnd - 30 * second + (onGrid ? 0 : random.int(in: 0...second))
        while time < workoutEnd + 90 * second {
            if random.chance(0.03) {
                time += random.int(in: second...(20 * second))
                if onGrid { time -= (time - workoutEnd) % gridStep }
            }
            if !random.chance(dropout) {
                let bpm = typicalBPM - Double(time - workoutEnd) / Double(second) * 0.4 + random.double(in: -5...5)
                readings.append(HeartRateReading(start: time, beatsPerMinute: bpm))
            }
            time += onGrid ? gridStep : Int64(Double(second) / hertz * random.double(in: 0.7...1.3))
        }
    }
}

/// The rules of the brute-force version; the sensitivity test bends them.
struct NaiveRecoveryRules: Sendable, CustomTestStringConvertible {
    var name = "as specified"
    var atEnd: ClosedRange<Int64> = (-10 * second)...0
    var afterOneMinute: ClosedRange<Int64> = (55 * second)...(65 * second)
    var minimumReadings = 2

    var testDescription: String { name }
}

/// Filters the whole list once per span and averages what is left.
private func naiveRecovery(_ workout: RecoveryCase, rules: NaiveRecoveryRules = NaiveRecoveryRules()) -> HeartRateRecovery? {
    func mean(of offsets: ClosedRange<Int64>) -> Double? {
        let values = workout.readings
            .filter { $0.start - workout.workoutEnd >= offsets.lowerBound && $0.start - workout.workoutEnd <= offsets.upperBound }
            .map(\.beatsPerMinute)
        guard values.count >= rules.minimumReadings else { return nil }
        return values.reduce(0, +) / Double(values.count)
    }
    guard let atEnd = mean(of: rules.atEnd), let after = mean(of: rules.afterOneMinute) else { return nil }
    return HeartRateRecovery(atEndBeatsPerMinute: atEnd, afterOneMinuteBeatsPerMinute: after)
}

private func recoveriesAgree(_ lhs: HeartRateRecovery?, _ rhs: HeartRateRecovery?) -> Bool {
    guard let lhs, let rhs else { return lhs == nil && rhs == nil }
    return abs(lhs.dropBeatsPerMinute - rhs.dropBeatsPerMinute) <= 1e-9
        && abs(lhs.atEndBeatsPerMinute - rhs.atEndBeatsPerMinute) <= 1e-9
        && abs(lhs.afterOneMinuteBeatsPerMinute - rhs.afterOneMinuteBeatsPerMinute) <= 1e-9
}

private func computed(_ workout: RecoveryCase) -> HeartRateRecovery? {
    HeartRateRecovery.oneMinute(workoutEnd: workout.workoutEnd, readings: workout.readings)
}

@Test func recoveryMatchesBruteForce() {
    var figures = 0
    for seed in propertySeeds {
        let workout = RecoveryCase(seed: seed)
        let expected = naiveRecovery(workout)
        let actual = computed(workout)
        #expect(recoveriesAgree(actual, expected), "seed \(seed): got \(String(describing: actual)), brute force \(String(describing: expected))")
        if expected != nil { figures += 1 }
    }
    #expect(figures > propertySeeds.count / 5 && figures < propertySeeds.count * 4 / 5, "\(figures) workouts with a figure")
}

@Test(arguments: [
    NaiveRecoveryRules(name: "end span from −9 s", atEnd: (-9 * second)...0),
    NaiveRecoveryRules(name: "end span from −11 s", atEnd: (-11 * second)...0),
    NaiveRecoveryRules(name: "end span open at the end", atEnd: (-10 * second)...(-1)),
    NaiveRecoveryRules(name: "end span open at the start", atEnd: (-10 * second + 1)...0),
    NaiveRecoveryRules(name: "after span from 54 s", afterOneMinute: (54 * second)...(65 * second)),
    NaiveRecoveryRules(name: "after span from 56 s", afterOneMinute: (56 * second)...(65 * second)),
    NaiveRecoveryRules(name: "after span open at the start", afterOneMinute: (55 * second + 1)...(65 * second)),
    NaiveRecoveryRules(name: "after span open at the end", afterOneMinute: (55 * second)...(65 * second - 1)),
    NaiveRecoveryRules(name: "after span to 66 s", afterOneMinute: (55 * second)...(66 * second)),
    NaiveRecoveryRules(name: "one reading enough", minimumReadings: 1),
    NaiveRecoveryRules(name: "three readings needed", minimumReadings: 3),
])
func recoveryPropertyTestNoticesAnOffByOne(rules: NaiveRecoveryRules) {
    let noticed = propertySeeds.contains { seed in
        let workout = RecoveryCase(seed: seed)
        return !recoveriesAgree(computed(workout), naiveRecovery(workout, rules: rules))
    }
    #expect(noticed, "no seed tells '\(rules.name)' from the method")
}
