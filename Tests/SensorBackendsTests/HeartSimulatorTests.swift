import SensorBackends
import Testing

@Suite("Heart simulator")
struct HeartSimulatorTests {
    func run(_ settings: HeartSimulatorSettings, seconds: Double, hz: Double) -> [SimulatedReading] {
        var simulator = HeartSimulator(settings: settings)
        return (1...Int(seconds * hz)).map { simulator.reading(at: Double($0) / hz) }
    }

    func settings(seed: UInt64 = 1, scenario: [Phase]? = nil, contactLoss: Double = 0) -> HeartSimulatorSettings {
        var settings = HeartSimulatorSettings()
        settings.seed = seed
        settings.contactLossProbability = contactLoss
        if let scenario { settings.scenario = scenario }
        return settings
    }

    @Test("the same seed gives the same readings; another seed does not")
    func determinism() {
        let a = run(settings(seed: 5, contactLoss: 0.01), seconds: 300, hz: 1)
        let b = run(settings(seed: 5, contactLoss: 0.01), seconds: 300, hz: 1)
        let c = run(settings(seed: 6, contactLoss: 0.01), seconds: 300, hz: 1)
        #expect(a == b)
        #expect(a != c)
    }

    @Test("at rest the mean rate is near the resting rate")
    func resting() {
        var rest = settings(scenario: [.rest(seconds: 600)])
        rest.restingBPM = 58
        let readings = run(rest, seconds: 300, hz: 1)
        let mean = Double(readings.map { Int($0.heartRate) }.reduce(0, +)) / Double(readings.count)
        #expect(abs(mean - 58) < 8)
    }

    @Test("exercise raises the rate well above rest, recovery brings it down")
    func exercise() {
        let phases: [Phase] = [.rest(seconds: 60), .exercise(seconds: 240, intensity: 0.8), .recovery(seconds: 300)]
        let readings = run(settings(scenario: phases), seconds: 600, hz: 1)
        let restRate = readings[50].heartRate
        let peak = readings[280].heartRate
        let recovered = readings[599].heartRate
        #expect(peak > restRate + 50)
        #expect(recovered < peak - 40)
    }

    @Test("RR intervals add up to the elapsed time when contact stays on")
    func rrSumsToTime() {
        let readings = run(settings(), seconds: 900, hz: 1)
        let total = Double(readings.flatMap(\.rrIntervals).map(Int.init).reduce(0, +)) / 1024
        #expect(abs(total - 900) < 3)
        #expect(readings.allSatisfy { $0.contactDetected })
    }

    @Test("at 4 Hz many notifications carry no RR; at 1 Hz during effort some carry two or more")
    func rrPerNotification() {
        let fast = run(settings(), seconds: 120, hz: 4)
        #expect(fast.filter { $0.rrIntervals.isEmpty }.count > fast.count / 3)
        let effort = run(settings(scenario: [.exercise(seconds: 600, intensity: 0.9)]), seconds: 300, hz: 1)
        #expect(effort.contains { $0.rrIntervals.count >= 2 && $0.heartRate > 120 })
    }

    @Test("contact is lost now and then; readings without contact carry no RR")
    func contactLoss() {
        let readings = run(settings(contactLoss: 0.01), seconds: 3600, hz: 1)
        let lost = readings.filter { !$0.contactDetected }
        #expect(!lost.isEmpty)
        #expect(lost.count < readings.count / 5)
        #expect(lost.allSatisfy { $0.rrIntervals.isEmpty })
    }

    @Test("energy never decreases and every value stays in range")
    func bounds() {
        var simulator = HeartSimulator(settings: settings(seed: 99, contactLoss: 0.02))
        var time = 0.0
        var generator = SeededGenerator(seed: 3)
        var lastEnergy: UInt16 = 0
        for _ in 0..<20_000 {
            time += Double.random(in: 0.05...2, using: &generator)
            let reading = simulator.reading(at: time)
            #expect(reading.energyExpendedKJ >= lastEnergy)
            lastEnergy = reading.energyExpendedKJ
            #expect(reading.heartRate == 0 || (30...220).contains(reading.heartRate))
            #expect(reading.rrIntervals.allSatisfy { (272...2048).contains($0) })
            if reading.contactDetected { #expect(reading.heartRate >= 30) }
        }
        #expect(lastEnergy > 0)
    }

    @Test("contact holds while the strap settles, even when losses are frequent")
    func settling() {
        let readings = run(settings(contactLoss: 0.5), seconds: 60, hz: 1)
        #expect(readings.prefix(30).allSatisfy { $0.contactDetected })
        #expect(readings.suffix(25).contains { !$0.contactDetected })
    }
}
