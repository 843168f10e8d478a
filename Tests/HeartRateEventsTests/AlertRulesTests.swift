import HeartRateEvents
import Testing

@Suite("Alert rules")
struct AlertRulesTests {
    @Test("the defaults are the documented ones, and usable")
    func defaults() {
        let rules = AlertRules.defaults
        #expect(rules.high == 120 && rules.low == 40 && rules.batteryLow == 10)
        #expect(rules.highFor == .seconds(600) && rules.lowFor == .seconds(600) && rules.contactLostFor == .seconds(30))
        #expect(rules.problem() == nil)
    }

    @Test("absurd rules are a problem in one line naming the key", arguments: [
        (AlertRules.defaults.overriding(high: 251, low: nil), "high"),
        (AlertRules.defaults.overriding(high: .nan, low: nil), "high"),
        (AlertRules.defaults.overriding(high: nil, low: 19.9), "low"),
        (AlertRules.defaults.overriding(high: 100, low: 100), "low"),
        (AlertRules.defaults.overriding(high: 50, low: 60), "low"),
        (AlertRules(high: 120, highFor: .milliseconds(999), low: 40, lowFor: .seconds(600), contactLostFor: .seconds(30), batteryLow: 10), "high-for"),
        (AlertRules(high: 120, highFor: .seconds(600), low: 40, lowFor: .seconds(86_401), contactLostFor: .seconds(30), batteryLow: 10), "low-for"),
        (AlertRules(high: 120, highFor: .seconds(600), low: 40, lowFor: .seconds(600), contactLostFor: .zero, batteryLow: 10), "contact-lost-for"),
        (AlertRules(high: 120, highFor: .seconds(600), low: 40, lowFor: .seconds(600), contactLostFor: .seconds(30), batteryLow: 100), "battery-low"),
        (AlertRules(high: 120, highFor: .seconds(600), low: 40, lowFor: .seconds(600), contactLostFor: .seconds(30), batteryLow: 0), "battery-low"),
    ])
    func problems(rules: AlertRules, key: String) throws {
        let problem = try #require(rules.problem())
        #expect(problem.hasPrefix(key + " ") && !problem.contains("\n"), "\(problem)")
    }

    @Test("the limits of each range are usable")
    func limits() {
        let widest = AlertRules(high: 250, highFor: .seconds(86_400), low: 20, lowFor: .seconds(1), contactLostFor: .seconds(1), batteryLow: 99)
        #expect(widest.problem() == nil)
        #expect(AlertRules.defaults.overriding(high: 41, low: nil).problem() == nil)
    }

    @Test("a person's limits override the rule's, nil keeps it")
    func overriding() {
        let rules = AlertRules.defaults.overriding(high: 160, low: nil)
        #expect(rules.high == 160 && rules.low == 40 && rules.highFor == .seconds(600))
        #expect(AlertRules.defaults.overriding(high: nil, low: nil) == .defaults)
        #expect(AlertRules.defaults.overriding(high: nil, low: 35).low == 35)
    }

    @Test("durations parse as plain seconds or with a unit", arguments: [
        ("30s", Duration.seconds(30)), ("10m", .seconds(600)), ("1h", .seconds(3600)), ("90", .seconds(90)),
        ("2.5", .milliseconds(2500)), ("0.5m", .seconds(30)), ("1d", .seconds(86_400)),
    ])
    func durations(text: String, duration: Duration) {
        #expect(AlertRules.duration(parsing: text) == duration)
    }

    @Test("what is not a duration is nil", arguments: ["", "s", "ten", "10 m", "10x", "-5", "-5s", "nan", "nans", "inf", "infh", "1e300h"])
    func notDurations(text: String) {
        #expect(AlertRules.duration(parsing: text) == nil)
    }

    @Test("durations print as the configuration writes them")
    func durationText() {
        #expect(AlertRules.text(of: .seconds(600)) == "10m")
        #expect(AlertRules.text(of: .seconds(7200)) == "2h")
        #expect(AlertRules.text(of: .seconds(90)) == "90s")
        #expect(AlertRules.text(of: .milliseconds(500)) == "0.5s")
        #expect(AlertRules.text(of: .zero) == "0s")
    }
}
