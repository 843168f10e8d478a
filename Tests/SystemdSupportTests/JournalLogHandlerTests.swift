import Glibc
import Logging
import Testing

@testable import SystemdSupport

@Suite("Journal fields")
struct JournalLogHandlerTests {
    @Test("metadata keys become journal field names", arguments: [
        ("device", "DEVICE"), ("sensor-location", "SENSOR_LOCATION"), ("type", "TYPE"),
        ("_private", "PRIVATE"), ("9lives", "LIVES"), ("é", nil), ("", nil),
    ] as [(String, String?)])
    func fieldNames(key: String, field: String?) {
        #expect(JournalLogHandler.fieldName(key) == field)
    }

    @Test("levels map to syslog priorities")
    func priorities() {
        #expect(JournalLogHandler.priority(.critical) == 2)
        #expect(JournalLogHandler.priority(.error) == 3)
        #expect(JournalLogHandler.priority(.warning) == 4)
        #expect(JournalLogHandler.priority(.notice) == 5)
        #expect(JournalLogHandler.priority(.info) == 6)
        #expect(JournalLogHandler.priority(.debug) == 7)
    }

    @Test("without a service manager nothing is connected")
    func detection() {
        let notifier = ServiceNotifier()
        if getenv("NOTIFY_SOCKET") == nil { #expect(!notifier.isActive) }
        if getenv("JOURNAL_STREAM") == nil { #expect(!JournalLogHandler.stderrIsJournal) }
    }
}
