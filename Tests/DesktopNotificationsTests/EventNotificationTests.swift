import DesktopNotifications
import HealthModel
import Testing
import Timestamps

@Suite("what the desktop says of an event")
struct EventNotificationTests {
    private static let start = Timestamp(microsecondsSinceEpoch: 1_795_000_000_000_000)

    private static func event(_ type: SampleType, ended: Bool, person: String? = "ann", threshold: Double? = 120, extreme: Double? = 151)
        -> HealthEvent
    {
        HealthEvent(
            id: "e", type: type, source: "hrmd", device: "strap-1", person: person, start: start, end: ended ? start.advanced(bySeconds: 725) : nil,
            latest: start.advanced(bySeconds: 725), threshold: threshold, extreme: extreme)
    }

    @Test("an opening heart-rate event is critical and says who, how high and since when; its end replaces it, normal")
    func heartRate() {
        let since = RFC3339.string(from: Self.start, fractionDigits: 0)
        let opened = EventNotification(Self.event(.highHeartRateEvent, ended: false))
        #expect(opened == EventNotification(summary: "High heart rate", body: "ann, up to 151 count/min, above 120, since \(since)", urgency: 2))
        let ended = EventNotification(Self.event(.highHeartRateEvent, ended: true))
        #expect(ended == EventNotification(
            summary: "Heart rate back under 120 count/min", body: "ann, up to 151 count/min, from \(since) for 12 min 5 s", urgency: 1))
        let low = EventNotification(Self.event(.lowHeartRateEvent, ended: false, threshold: 40, extreme: 35.5))
        #expect(low.summary == "Low heart rate")
        #expect(low.body.hasPrefix("ann, down to 35.5 count/min, below 40, since "))
        #expect(low.urgency == 2)
    }

    @Test("contact and battery events are normal; a strap nobody wears is named by its identifier")
    func strapEvents() {
        let lost = EventNotification(Self.event(.sensorContactLost, ended: false, person: nil, threshold: nil, extreme: nil))
        #expect((lost.summary, lost.urgency) == ("Strap lost skin contact", 1))
        #expect(lost.body.hasPrefix("strap-1, since "))
        let battery = EventNotification(Self.event(.strapBatteryLow, ended: false, person: nil, threshold: 10, extreme: 8))
        #expect(battery.summary == "Strap battery low")
        #expect(battery.body.hasPrefix("strap-1, 8 %, since "))
        #expect(EventNotification(Self.event(.strapBatteryLow, ended: true)).summary == "Strap battery recovered")
    }
}
