import HeartRateEvents
import Testing
import Timestamps

@Suite("Battery-low events")
struct BatteryWatchTests {
    private func at(_ seconds: Int64) -> Timestamp { Timestamp(microsecondsSinceEpoch: RandomReadings.origin + seconds * 1_000_000) }

    private func battery(_ start: Int64, _ end: Int64?, lastEnd: Int64, extreme: Double) -> DetectedEvent {
        DetectedEvent(kind: .batteryLow, start: at(start), end: end.map(at), lastEnd: at(lastEnd), threshold: 10, extreme: extreme)
    }

    @Test("opens under the limit, holds until 5 points above it, reports a falling level")
    func hysteresis() {
        var watch = BatteryWatch(rules: .defaults)
        #expect(watch.recoveryLevel == 15)
        #expect(watch.add(level: 50, at: at(0)).isEmpty)
        #expect(watch.add(level: 10, at: at(1)).isEmpty, "at the limit is not under it")
        #expect(watch.add(level: 9, at: at(2)) == [.opened(battery(2, nil, lastEnd: 2, extreme: 9))])
        #expect(watch.add(level: 12, at: at(3)).isEmpty)
        #expect(watch.add(level: 9, at: at(4)).isEmpty)
        #expect(watch.add(level: 8, at: at(5)) == [.extended(battery(2, nil, lastEnd: 5, extreme: 8))])
        #expect(watch.add(level: 14, at: at(6)).isEmpty)
        #expect(watch.openEvent == battery(2, nil, lastEnd: 6, extreme: 8))
        #expect(watch.add(level: 15, at: at(7)) == [.closed(battery(2, 7, lastEnd: 7, extreme: 8))])
        #expect(watch.add(level: 12, at: at(8)).isEmpty)
        #expect(watch.add(level: 3, at: at(9)) == [.opened(battery(9, nil, lastEnd: 9, extreme: 3))])
        #expect(watch.finish() == [.closed(battery(9, 9, lastEnd: 9, extreme: 3))])
        #expect(watch.finish().isEmpty)
    }

    @Test("a resumed event closes on recovery; levels out of order or range are skipped")
    func resumingAndSkipping() {
        var watch = BatteryWatch(rules: .defaults, resuming: battery(2, nil, lastEnd: 6, extreme: 8))
        #expect(watch.add(level: 101, at: at(7)).isEmpty && watch.add(level: -1, at: at(7)).isEmpty)
        #expect(watch.add(level: 7, at: at(8)) == [.extended(battery(2, nil, lastEnd: 8, extreme: 7))])
        #expect(watch.add(level: 100, at: at(7)).isEmpty)
        #expect(watch.skippedOutOfRange == 2 && watch.skippedOutOfOrder == 1)
        #expect(watch.add(level: 100, at: at(9)) == [.closed(battery(2, 9, lastEnd: 9, extreme: 7))])
        var rules = AlertRules.defaults
        rules.batteryLow = 99
        var nearlyFull = BatteryWatch(rules: rules)
        #expect(nearlyFull.recoveryLevel == 100)
        #expect(nearlyFull.add(level: 98, at: at(0)).count == 1 && nearlyFull.add(level: 100, at: at(1)).count == 1)
    }
}
