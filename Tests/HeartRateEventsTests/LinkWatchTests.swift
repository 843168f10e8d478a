import HeartRateEvents
import Testing
import Timestamps

@Suite("a strap's link: down long enough without hearing the strap is a disconnected event")
struct LinkWatchTests {
    static let rules = AlertRules(
        high: 120, highFor: .seconds(600), low: 40, lowFor: .seconds(600), contactLostFor: .seconds(30), batteryLow: 10,
        disconnectedFor: .seconds(60))

    static func at(_ seconds: Int64) -> Timestamp { Timestamp(microsecondsSinceEpoch: 1_795_168_800_000_000 + seconds * 1_000_000) }

    @Test("a strap back within the rule's time makes nothing; one back after it makes one closed event from the drop to the return")
    func replayed() {
        var watch = LinkWatch(rules: Self.rules)
        #expect(watch.disconnected(at: Self.at(0)).isEmpty)
        #expect(watch.heard(at: Self.at(59)).isEmpty, "59 s is short of the minute")
        #expect(!watch.isWatching)
        #expect(watch.disconnected(at: Self.at(100)).isEmpty)
        #expect(watch.disconnected(at: Self.at(130)).isEmpty, "a second drop while down keeps the first time")
        let updates = watch.heard(at: Self.at(160))
        #expect(updates == [.closed(DetectedEvent(kind: .disconnected, start: Self.at(100), end: Self.at(160), lastEnd: Self.at(160), threshold: 60, extreme: nil))])
        #expect(watch.heard(at: Self.at(161)).isEmpty)
    }

    @Test("live, the clock opens the event once the time has passed, and the strap's return closes it: the same event as a replay")
    func live() {
        var watch = LinkWatch(rules: Self.rules)
        _ = watch.disconnected(at: Self.at(0))
        #expect(watch.tick(now: Self.at(59)).isEmpty)
        let opened = watch.tick(now: Self.at(60))
        #expect(opened == [.opened(DetectedEvent(kind: .disconnected, start: Self.at(0), end: nil, lastEnd: Self.at(60), threshold: 60, extreme: nil))])
        #expect(watch.tick(now: Self.at(90)).isEmpty, "opened once")
        #expect(watch.openEvent?.start == Self.at(0))
        let closed = watch.heard(at: Self.at(200))
        var replay = LinkWatch(rules: Self.rules)
        _ = replay.disconnected(at: Self.at(0))
        #expect(closed == replay.heard(at: Self.at(200)))
        #expect(watch.openEvent == nil && !watch.isWatching)
    }

    @Test("a recording's end forgets a link still down; an event open from an earlier run is closed by the strap's return")
    func endsAndResumes() {
        var watch = LinkWatch(rules: Self.rules)
        _ = watch.disconnected(at: Self.at(0))
        #expect(watch.finish().isEmpty)
        #expect(watch.heard(at: Self.at(500)).isEmpty, "nothing was known to be down")
        let stored = DetectedEvent(kind: .disconnected, start: Self.at(0), end: nil, lastEnd: Self.at(60), threshold: 60, extreme: nil)
        var resumed = LinkWatch(rules: Self.rules, resuming: stored)
        #expect(resumed.isWatching)
        #expect(resumed.heard(at: Self.at(-5)).isEmpty, "a frame from before the drop changes nothing")
        #expect(resumed.heard(at: Self.at(700)) == [.closed(DetectedEvent(
            kind: .disconnected, start: Self.at(0), end: Self.at(700), lastEnd: Self.at(700), threshold: 60, extreme: nil))])
        let other = DetectedEvent(kind: .batteryLow, start: Self.at(0), end: nil, lastEnd: Self.at(0), threshold: 10, extreme: 5)
        #expect(!LinkWatch(rules: Self.rules, resuming: other).isWatching, "another kind is not resumed")
    }

    @Test("a rule's time is checked like the others: 1 s to 24 h, named by its key")
    func ruleRange() {
        var rules = Self.rules
        rules.disconnectedFor = .seconds(86_401)
        #expect(rules.problem()?.hasPrefix("disconnected-for ") == true, "\(rules.problem() ?? "-")")
        #expect(AlertRules.defaults.disconnectedFor == .seconds(60))
    }
}
