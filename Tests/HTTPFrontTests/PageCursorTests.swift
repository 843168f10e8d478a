import Testing
import Timestamps

@testable import HealthRequests

/// The cursor of `/api/v1/samples` (SamplePage): what a page gives reads back, and a forged one
/// is refused before it reaches the store, also one far outside the years a store holds.
@Suite("Page cursors")
struct PageCursorTests {
    @Test("a cursor reads back as it was written")
    func roundTrip() throws {
        let cursor = PageCursor(start: Timestamp(microsecondsSinceEpoch: 1_795_000_000_000_123), seen: 3)
        #expect(try PageCursor(cursor.text) == cursor)
    }

    @Test("forged cursors are refused", arguments: [
        "", "1", "1.0", "1.-1", "a.1", "1.1.1", "1.10001", " 1.1", "-9223372036854775808.1", "9223372036854775807.1",
        "-62135596800000001.1", "253402300800000000.1", "1." + String(repeating: "9", count: 40),
    ])
    func forged(text: String) {
        #expect(throws: RequestFailure.self) { try PageCursor(text) }
    }
}
