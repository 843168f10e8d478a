@testable import SensorSimulator
import Testing

@Suite("Heart simulator")
struct HeartSimulatorTests {
    /// Readings every 1/`hz` s for `seconds`, the way the mock calls the simulator.
    func run(_ settings: HeartSimulatorSettings, seconds: Double, hz: Double) -> [SimulatedReading] {
        var simulator = HeartSimulator(settings: settings)
        return (1...Int(seconds * hz)).map { simulator.reading(at: Double($0) / hz) }
    }

    func settings(seed: UInt64 = 1, scenario: [Phase]? = nil, contactLoss: Double = 0) -> HeartSimulatorSettings {
        var settings = HeartSimulatorSettings(seed: seed, contactLossProbability: contactLoss)
        if let scenario { settings.scenario = scenario }
        return settings
    }

    func meanRate(_ readings: some Collection<SimulatedReading>) -> Double {
        Double(readings.map { Int($0.heartRate) }.reduce(0, +)) / Double(readings.count)
    }

    func seconds(_ intervals: some Sequence<UInt16>) -> Double {
        Double(intervals.map(Int.init).reduce(0, +)) / 1024
    }

    /// The root mean square of successive differences, 1/1024 s.
    func rmssd(_ intervals: [UInt16]) -> Double {
        let differences = zip(intervals, intervals.dropFirst()).map { Double(Int($1) - Int($0)) }
        return (differences.map { $0 * $0 }.reduce(0, +) / Double(differences.count)).squareRoot()
    }

    @Test("the same seed gives the same readings")
    func sameSeed() {
        let a = run(settings(seed: 5, contactLoss: 0.01), seconds: 600, hz: 4)
        let b = run(settings(seed: 5, contactLoss: 0.01), seconds: 600, hz: 4)
        #expect(a == b)
    }

    @Test("another seed gives other beats and other contact losses")
    func otherSeed() {
        let a = run(settings(seed: 5, contactLoss: 0.01), seconds: 900, hz: 1)
        let b = run(settings(seed: 6, contactLoss: 0.01), seconds: 900, hz: 1)
        #expect(a.flatMap(\.rrIntervals) != b.flatMap(\.rrIntervals))
        #expect(a.map(\.contactDetected) != b.map(\.contactDetected))
    }

    @Test("beats and contact do not depend on how often readings are taken")
    func pollingRate() {
        let slow = run(settings(), seconds: 600, hz: 1)
        let fast = run(settings(), seconds: 600, hz: 4)
        let irregular: [SimulatedReading] = {
            var simulator = HeartSimulator(settings: settings())
            var generator = SeededGenerator(seed: 8)
            var time = 0.0
            var readings: [SimulatedReading] = []
            while time < 600 {
                time = min(600, time + 0.01 + 3 * generator.nextUnit())
                readings.append(simulator.reading(at: time))
            }
            return readings
        }()
        #expect(slow.flatMap(\.rrIntervals) == fast.flatMap(\.rrIntervals))
        #expect(slow.flatMap(\.rrIntervals) == irregular.flatMap(\.rrIntervals))

        let lossy = settings(seed: 4, contactLoss: 0.05)
        let slowContact = run(lossy, seconds: 600, hz: 1).map(\.contactDetected)
        let fastContact = run(lossy, seconds: 600, hz: 4).enumerated().filter { $0.offset % 4 == 3 }.map(\.element.contactDetected)
        #expect(slowContact.contains(false))
        #expect(slowContact == fastContact)
    }

    @Test("at rest the mean rate over five minutes is near the resting rate", arguments: [45.0, 58, 62, 90])
    func resting(bpm: Double) {
        var rest = settings(scenario: [.rest(seconds: 600)])
        rest.restingBPM = bpm
        let mean = meanRate(run(rest, seconds: 300, hz: 1))
        #expect(abs(mean - bpm) < 8)
    }

    @Test("exercise raises the rate well above rest; recovery brings it back down")
    func exercise() throws {
        let phases: [Phase] = [.rest(seconds: 60), .exercise(seconds: 240, intensity: 0.8), .recovery(seconds: 300)]
        let readings = run(settings(scenario: phases), seconds: 600, hz: 1)
        let resting = meanRate(readings[30..<60])
        let effort = meanRate(readings[240..<300])
        let recovered = meanRate(readings[570..<600])
        #expect(resting < 70)
        #expect(effort > resting + 60)
        #expect(effort < 185)
        #expect(recovered < resting + 10)
        // The heart speeds up faster than it slows down.
        let riseToHalf = try #require(readings[60...].firstIndex { Double($0.heartRate) > (resting + effort) / 2 }) - 60
        let fallToHalf = try #require(readings[300...].firstIndex { Double($0.heartRate) < (resting + effort) / 2 }) - 300
        #expect(2 * fallToHalf > 3 * riseToHalf, "half way up in \(riseToHalf) s, down in \(fallToHalf) s")
    }

    @Test("the default scenario repeats rest, effort and recovery")
    func defaultScenario() {
        let readings = run(settings(), seconds: 720, hz: 1)
        let cycle = HeartSimulatorSettings.defaultScenario.reduce(0) { $0 + $1.seconds }
        #expect(cycle == 360)
        for start in [0, 360] {
            #expect(meanRate(readings[(start + 30)..<(start + 60)]) < 72)
            #expect(meanRate(readings[(start + 240)..<(start + 270)]) > 140)
        }
    }

    @Test("RR intervals add up to the elapsed time when contact stays on", arguments: [1.0, 4.0])
    func rrSumsToTime(hz: Double) {
        let readings = run(settings(), seconds: 1800, hz: hz)
        let total = seconds(readings.flatMap(\.rrIntervals))
        #expect(readings.allSatisfy { $0.contactDetected })
        #expect(total <= 1800)
        #expect(1800 - total < 2)
    }

    @Test("at 4 Hz many notifications carry no RR; at 1 Hz during effort some carry two or more")
    func rrPerNotification() {
        let fast = run(settings(), seconds: 360, hz: 4)
        #expect(fast.filter { $0.rrIntervals.isEmpty }.count > fast.count / 3)
        #expect(fast.contains { !$0.rrIntervals.isEmpty })
        let effort = run(settings(scenario: [.exercise(seconds: 600, intensity: 0.9)]), seconds: 300, hz: 1)
        #expect(effort.contains { $0.rrIntervals.count >= 2 && $0.heartRate > 120 })
        #expect(effort.allSatisfy { $0.rrIntervals.count <= 4 })
    }

    @Test("the reported rate is 60 over the mean of the last four intervals")
    func smoothing() {
        var simulator = HeartSimulator(settings: settings())
        var intervals: [UInt16] = []
        var mismatches: [String] = []
        for second in 1...300 {
            let reading = simulator.reading(at: Double(second))
            intervals += reading.rrIntervals
            guard intervals.count >= 4 else { continue }
            let expected = (60 / (seconds(intervals.suffix(4)) / 4)).rounded()
            if Double(reading.heartRate) != expected { mismatches.append("\(reading.heartRate) for \(expected) at \(second) s") }
        }
        #expect(mismatches.isEmpty, "\(mismatches.prefix(5))")
    }

    @Test("beat-to-beat variation is larger at rest than at high rates")
    func variability() {
        let rest = run(settings(scenario: [.rest(seconds: 600)]), seconds: 300, hz: 1).flatMap(\.rrIntervals)
        let effort = run(settings(scenario: [.exercise(seconds: 600, intensity: 0.9)]), seconds: 300, hz: 1)
            .suffix(120).flatMap(\.rrIntervals)
        func mean(_ intervals: [UInt16]) -> Double { seconds(intervals) * 1024 / Double(intervals.count) }
        #expect(rmssd(rest) > 30)  // 30 ms or more, as for a fit adult at rest
        #expect(rmssd(rest) > 6 * rmssd(effort))
        // Relative to the interval, too.
        #expect(rmssd(rest) / mean(rest) > 2 * rmssd(effort) / mean(effort))
        #expect(Set(effort).count > 5)
    }

    @Test("breathing lengthens and shortens the intervals at 0.25 Hz")
    func breathing() {
        let intervals = run(settings(scenario: [.rest(seconds: 600)]), seconds: 600, hz: 1).flatMap(\.rrIntervals)
        let mean = Double(intervals.map(Int.init).reduce(0, +)) / Double(intervals.count)
        // Each interval starts at the beat before it; the strap locked onto a beat at 0.
        var start = 0.0
        var inPhase = 0.0
        var outOfPhase = 0.0
        for interval in intervals {
            let deviation = (Double(interval) - mean) / mean
            inPhase += deviation * HeartSimulator.PlainMath.sine(turns: 0.25 * start)
            outOfPhase += deviation * HeartSimulator.PlainMath.sine(turns: 0.25 * start + 0.25)
            start += Double(interval) / 1024
        }
        // For a modulation of depth d, the mean of deviation × sin is d / 2.
        let depth = 2 * inPhase / Double(intervals.count)
        #expect(depth > 0.035 && depth < 0.065)
        #expect(abs(2 * outOfPhase / Double(intervals.count)) < 0.01)
    }

    @Test("contact is lost now and then; readings without contact carry no RR and soon no rate")
    func contactLoss() {
        let readings = run(settings(contactLoss: 0.01), seconds: 3600, hz: 1)
        let lost = readings.filter { !$0.contactDetected }
        #expect(!lost.isEmpty)
        #expect(lost.count < readings.count / 10)
        #expect(lost.allSatisfy { $0.rrIntervals.isEmpty })
        #expect(lost.contains { $0.heartRate == 0 })
        #expect(readings.allSatisfy { !$0.contactDetected || $0.heartRate >= 30 })
        let episodes = zip(readings, readings.dropFirst()).filter { $0.contactDetected && !$1.contactDetected }.count
        #expect(episodes > 10 && episodes < 60)
        #expect(readings.suffix(60).contains { $0.contactDetected })
    }

    @Test("between losses of contact the intervals cover the time on the skin and reach no further back")
    func intervalsBetweenLosses() {
        let readings = run(settings(contactLoss: 0.02), seconds: 3600, hz: 1)
        // A stretch on the skin starts after the last reading without contact.
        var stretchStart = 0.0
        var covered = 0.0
        var stretches = 0
        var problems: [String] = []
        for (index, reading) in readings.enumerated() {
            let time = Double(index + 1)
            guard reading.contactDetected else {
                if covered > 0 {
                    stretches += 1
                    if time - 1 - stretchStart - covered > 3 { problems.append("\(covered) s covered by \(time - 1) s") }
                }
                stretchStart = time
                covered = 0
                continue
            }
            covered += seconds(reading.rrIntervals)
            if covered > time - stretchStart { problems.append("\(covered) s covered at \(time) s since \(stretchStart) s") }
        }
        #expect(stretches > 20)
        #expect(problems.count == 0, "\(problems.prefix(5))")
    }

    @Test("contact holds while the strap settles, even when losses are frequent")
    func settling() {
        let readings = run(settings(contactLoss: 0.5), seconds: 60, hz: 1)
        #expect(readings.prefix(30).allSatisfy { $0.contactDetected })
        #expect(readings.suffix(25).contains { !$0.contactDetected })
    }

    @Test("without RR intervals the rate is still reported")
    func noIntervals() {
        var quiet = settings()
        quiet.emitsRRIntervals = false
        let readings = run(quiet, seconds: 120, hz: 1)
        #expect(readings.allSatisfy { $0.rrIntervals.isEmpty })
        #expect(readings.map(\.heartRate) == run(settings(), seconds: 120, hz: 1).map(\.heartRate))
    }

    @Test("energy never decreases and grows faster with effort")
    func energy() {
        let rest = run(settings(scenario: [.rest(seconds: 600)]), seconds: 600, hz: 1)
        let effort = run(settings(scenario: [.exercise(seconds: 600, intensity: 0.8)]), seconds: 600, hz: 1)
        for readings in [rest, effort] {
            #expect(zip(readings, readings.dropFirst()).allSatisfy { $0.energyExpendedKJ <= $1.energyExpendedKJ })
        }
        let restKJ = Double(rest.last!.energyExpendedKJ)
        let effortKJ = Double(effort.last!.energyExpendedKJ)
        #expect(restKJ > 40 && restKJ < 60)  // about 5 kJ a minute
        #expect(effortKJ > 3 * restKJ)
    }

    @Test("the energy counter stays at 65535 once reached")
    func energySaturates() {
        var hungry = settings()
        hungry.energyPerBeatJoules = 2_000_000
        let readings = run(hungry, seconds: 120, hz: 1)
        #expect(readings.first!.energyExpendedKJ < 65535)
        #expect(zip(readings, readings.dropFirst()).allSatisfy { $0.energyExpendedKJ <= $1.energyExpendedKJ })
        #expect(readings.suffix(60).allSatisfy { $0.energyExpendedKJ == 65535 })
    }

    @Test("time that stands still or goes back reports no new beats")
    func timeGoingBack() {
        var simulator = HeartSimulator(settings: settings())
        let first = simulator.reading(at: 10)
        #expect(!first.rrIntervals.isEmpty)
        for time in [10, 5, -1, .nan, .infinity, -.infinity] as [Double] {
            let again = simulator.reading(at: time)
            #expect(again.rrIntervals.isEmpty)
            #expect(again.heartRate == first.heartRate)
        }
        #expect(!simulator.reading(at: 12).rrIntervals.isEmpty)
    }

    @Test("unreasonable settings are kept within bounds")
    func unreasonableSettings() {
        let cases: [HeartSimulatorSettings] = [
            HeartSimulatorSettings(restingBPM: 300, maxBPM: 500),
            HeartSimulatorSettings(restingBPM: 10, maxBPM: 5),
            HeartSimulatorSettings(restingBPM: .nan, maxBPM: .infinity, contactLossProbability: .nan, energyPerBeatJoules: .nan),
            HeartSimulatorSettings(
                contactLossProbability: 7, settlingSeconds: -5,
                scenario: [.exercise(seconds: .nan, intensity: 3), .exercise(seconds: 20, intensity: -2), .rest(seconds: -1)]),
            HeartSimulatorSettings(scenario: []),
        ]
        for settings in cases {
            for reading in run(settings, seconds: 300, hz: 2) {
                #expect(reading.heartRate == 0 || (30...220).contains(reading.heartRate))
                #expect(reading.rrIntervals.allSatisfy { (272...2048).contains($0) })
            }
        }
        let fast = run(HeartSimulatorSettings(restingBPM: 300, maxBPM: 500), seconds: 60, hz: 1)
        #expect(fast.last!.heartRate >= 210)
        let slow = run(HeartSimulatorSettings(restingBPM: 10, maxBPM: 5), seconds: 60, hz: 1)
        #expect(slow.last!.heartRate <= 40)
    }

    @Test("every value stays in range over a long randomized run", arguments: [1, 2, 3] as [UInt64])
    func bounds(seed: UInt64) {
        var generator = SeededGenerator(seed: seed)
        let settings = HeartSimulatorSettings(
            restingBPM: 30 + 120 * generator.nextUnit(), maxBPM: 150 + 80 * generator.nextUnit(), seed: seed,
            contactLossProbability: 0.05 * generator.nextUnit(),
            scenario: (0..<6).map { _ in .exercise(seconds: 10 + 200 * generator.nextUnit(), intensity: generator.nextUnit()) })
        var simulator = HeartSimulator(settings: settings)
        var time = 0.0
        var lastEnergy: UInt16 = 0
        var problems: [String] = []
        var sawLoss = false
        for _ in 0..<20_000 {
            time += 0.05 + 1.95 * generator.nextUnit()
            let reading = simulator.reading(at: time)
            if reading.energyExpendedKJ < lastEnergy { problems.append("energy fell at \(time)") }
            lastEnergy = reading.energyExpendedKJ
            if reading.contactDetected ? !(30...220).contains(reading.heartRate) : reading.heartRate > 220 {
                problems.append("rate \(reading.heartRate) at \(time)")
            }
            if !reading.rrIntervals.allSatisfy({ (272...2048).contains($0) }) { problems.append("RR at \(time)") }
            if !reading.contactDetected {
                sawLoss = true
                if !reading.rrIntervals.isEmpty { problems.append("RR without contact at \(time)") }
            }
        }
        #expect(problems.count == 0, "\(problems.prefix(5))")
        #expect(lastEnergy > 0)
        #expect(sawLoss)
    }

    @Test("the generator is SplitMix64")
    func generator() {
        var zero = SeededGenerator(seed: 0)
        #expect(zero.next() == 0xE220_A839_7B1D_CDAF)
        #expect(zero.next() == 0x6E78_9E6A_A1B9_65F4)
        #expect(zero.next() == 0x06C4_5D18_8009_454F)

        var generator = SeededGenerator(seed: 42)
        let units = (0..<10_000).map { _ in generator.nextUnit() }
        #expect(units.allSatisfy { (0..<1).contains($0) })
        let normals = (0..<10_000).map { _ in generator.nextNormal() }
        let mean = normals.reduce(0, +) / Double(normals.count)
        let deviation = (normals.map { ($0 - mean) * ($0 - mean) }.reduce(0, +) / Double(normals.count)).squareRoot()
        #expect(abs(mean) < 0.05)
        #expect(abs(deviation - 1) < 0.05)
        #expect(normals.allSatisfy { abs($0) <= 6 })
    }

    @Test("the plain sine and exponential agree with known values")
    func plainMath() {
        let sines: [(turns: Double, value: Double)] = [
            (0, 0), (0.25, 1), (0.5, 0), (0.75, -1), (1 / 12, 0.5), (-1 / 12, -0.5), (0.125, 0.5.squareRoot()),
            (1000.375, 0.5.squareRoot()), (0.1, 0.58778525229247312),
        ]
        for (turns, value) in sines {
            #expect(abs(HeartSimulator.PlainMath.sine(turns: turns) - value) < 1e-12, "sin of \(turns) turns")
        }
        let decays: [(x: Double, value: Double)] = [
            (0, 1), (0.05, 0.95122942450071402), (1, 0.36787944117144233), (2.5, 0.082084998623898795),
            (20, 2.0611536224385579e-9), (-1, 1), (1000, 0),
        ]
        for (x, value) in decays {
            #expect(abs(HeartSimulator.PlainMath.decay(x) - value) <= 1e-13 * max(value, 1e-9), "e^-\(x)")
        }
    }
}
