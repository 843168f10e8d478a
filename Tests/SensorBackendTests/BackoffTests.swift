import SensorBackend
import Testing

@Suite struct BackoffTests {
    @Test func doublesFromOneSecondAndCapsAtSixty() {
        let backoff = Backoff(initial: .seconds(1), maximum: .seconds(60), jitter: 0)
        let delays = (1...9).map { backoff.delay(attempt: $0, unit: 0.3) }
        #expect(delays == [1, 2, 4, 8, 16, 32, 60, 60, 60].map { Duration.seconds($0) })
        #expect(backoff.delay(attempt: 500, unit: 0.5) == .seconds(60))
    }

    @Test func jitterStaysWithinItsFraction() {
        let backoff = Backoff(initial: .seconds(1), maximum: .seconds(60), jitter: 0.2)
        #expect(backoff.delay(attempt: 3, unit: 0) == .milliseconds(3200))
        #expect(backoff.delay(attempt: 3, unit: 0.5) == .seconds(4))
        #expect(backoff.delay(attempt: 3, unit: 1) == .milliseconds(4800))
        #expect(backoff.delay(attempt: 7, unit: 0.999) <= .seconds(72))
    }
}
