import Testing
import Timestamps

@Suite("RFC 3339")
struct RFC3339Tests {
    @Test("formats UTC with milliseconds")
    func formats() {
        #expect(RFC3339.string(from: Timestamp(microsecondsSinceEpoch: 0)) == "1970-01-01T00:00:00.000Z")
        #expect(RFC3339.string(from: Timestamp(microsecondsSinceEpoch: 1_763_632_800_123_456)) == "2025-11-20T10:00:00.123Z")
        #expect(RFC3339.string(from: Timestamp(microsecondsSinceEpoch: 1_763_632_800_123_456), fractionDigits: 6) == "2025-11-20T10:00:00.123456Z")
        #expect(RFC3339.string(from: Timestamp(microsecondsSinceEpoch: -1), fractionDigits: 6) == "1969-12-31T23:59:59.999999Z")
        #expect(RFC3339.string(from: Timestamp(microsecondsSinceEpoch: 951_782_400_000_000), fractionDigits: 0) == "2000-02-29T00:00:00Z")
    }

    @Test("parses Z, offsets and fractions")
    func parses() {
        let reference = Timestamp(microsecondsSinceEpoch: 1_763_632_800_000_000)
        #expect(RFC3339.parse("2025-11-20T10:00:00Z") == reference)
        #expect(RFC3339.parse("2025-11-20T11:30:00+01:30") == reference)
        #expect(RFC3339.parse("2025-11-20T05:00:00-05:00") == reference)
        #expect(RFC3339.parse("2025-11-20t10:00:00.5z") == reference.advanced(bySeconds: 0.5))
        #expect(RFC3339.parse("2025-11-20T10:00:00.123456789Z") == Timestamp(microsecondsSinceEpoch: 1_763_632_800_123_456))
    }

    @Test("rejects what is not a date-time", arguments: [
        "", "2025-11-20", "2025-11-20T10:00:00", "2025-13-01T00:00:00Z", "2025-02-29T00:00:00Z",
        "2025-11-20T24:00:00Z", "2025-11-20T10:00:00.Z", "2025-11-20T10:00:00Zjunk", "20251120T100000Z",
    ])
    func rejects(text: String) {
        #expect(RFC3339.parse(text) == nil)
    }

    @Test("round-trips every microsecond-exact time across centuries")
    func roundTrip() {
        var value: Int64 = -2_208_988_800_000_000  // 1900
        while value < 4_102_444_800_000_000 {  // 2100
            let time = Timestamp(microsecondsSinceEpoch: value)
            #expect(RFC3339.parse(RFC3339.string(from: time, fractionDigits: 6)) == time)
            value += 86_400_000_000 * 37 + 1_234_567
        }
    }
}
