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

@Suite("RFC 3339 millisecond writer")
struct RFC3339MillisecondWriterTests {
    private func written(_ times: [Int64]) -> [String] {
        var writer = RFC3339MillisecondWriter()
        let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: RFC3339MillisecondWriter.maximumLength)
        defer { buffer.deallocate() }
        return times.map { micros in
            let count = writer.write(Timestamp(microsecondsSinceEpoch: micros), to: buffer)
            return String(decoding: UnsafeBufferPointer(start: buffer, count: count), as: UTF8.self)
        }
    }

    @Test("writes what RFC3339.string writes, across hours, days, years and the epoch")
    func matchesString() {
        var generator = SystemRandomNumberGenerator()
        var times: [Int64] = [0, -1, -999, -1000, -1001, 3_599_999_999, 3_600_000_000, 951_868_799_999_999, 951_868_800_000_000]
        // Runs within one hour, then jumps forward and backward, as merged chunks do.
        var time: Int64 = 1_767_225_600_000_000
        for _ in 0..<5000 {
            time += Int64.random(in: -4_000_000_000...900_000_000, using: &generator)
            times.append(time)
        }
        // Far years: before 1970, before year 1, and 5-digit years.
        times += [-62_135_596_800_000_000, -62_135_596_800_000_001, 253_402_300_800_000_000, -210_866_803_200_000_001]
        for _ in 0..<2000 { times.append(Int64.random(in: -300_000_000_000_000_000...300_000_000_000_000_000, using: &generator)) }
        let expected = times.map { RFC3339.string(from: Timestamp(microsecondsSinceEpoch: $0), fractionDigits: 3) }
        #expect(written(times) == expected)
    }

    @Test("a write never runs past maximumLength")
    func bounded() {
        let extremes: [Int64] = [.min, .max, .min + 1, .max - 1]
        for (text, micros) in zip(written(extremes), extremes) {
            #expect(text.utf8.count <= RFC3339MillisecondWriter.maximumLength)
            #expect(text == RFC3339.string(from: Timestamp(microsecondsSinceEpoch: micros), fractionDigits: 3))
        }
    }
}
