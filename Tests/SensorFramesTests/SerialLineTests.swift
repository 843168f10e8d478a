import SensorFrames
import TestSupport
import Testing

@Suite("serial line protocol")
struct SerialLineTests {
    @Test("lines with heart rate, RR intervals and battery", arguments: [
        ("HR 72", SerialHeartRateLine(heartRate: 72)),
        ("HR 72 RR 812 790", SerialHeartRateLine(heartRate: 72, rrIntervalsMilliseconds: [812, 790])),
        ("hr 64\tbatt 80", SerialHeartRateLine(heartRate: 64, batteryPercent: 80)),
        ("HR 180 RR 333 BATT 5\r", SerialHeartRateLine(heartRate: 180, rrIntervalsMilliseconds: [333], batteryPercent: 5)),
        ("", SerialHeartRateLine(heartRate: nil)),
        ("# firmware 1.2 ready", SerialHeartRateLine(heartRate: nil)),
    ])
    func parses(text: String, expected: SerialHeartRateLine) throws {
        #expect(try SerialHeartRateLine(parsing: Array(text.utf8)) == expected)
    }

    @Test("round trip through the text form")
    func roundTrip() throws {
        let line = SerialHeartRateLine(heartRate: 91, rrIntervalsMilliseconds: [650, 662, 641], batteryPercent: 77)
        #expect(try SerialHeartRateLine(parsing: Array(line.text.utf8)) == line)
    }

    @Test("malformed lines are typed errors", arguments: [
        ("HR", SerialLineError.missingValue(field: "HR")),
        ("HR seventy", .notANumber(field: "HR", value: "SEVENTY")),
        ("HR 0", .outOfRange(field: "HR", value: "0")),
        ("HR 72 RR", .missingValue(field: "RR")),
        ("HR 72 RR 0", .outOfRange(field: "RR", value: "0")),
        ("HR 72 HR 73", .repeatedKeyword("HR")),
        ("BPM 72", .unknownKeyword("BPM")),
        ("HR 72 SPO2 98", .unknownKeyword("SPO2")),
    ])
    func rejects(text: String, error: SerialLineError) {
        #expect(throws: error) { try SerialHeartRateLine(parsing: Array(text.utf8)) }
    }

    @Test("bytes that are not UTF-8")
    func notText() {
        #expect(throws: SerialLineError.notText) { try SerialHeartRateLine(parsing: [0x48, 0x52, 0xFF, 0xFE]) }
    }
}

@Suite("line framer")
struct LineFramerTests {
    private let stream = Array("HR 60\nHR 61 RR 980\r\n\n# note\nHR 62\n".utf8)
    private let expected = ["HR 60", "HR 61 RR 980", "", "# note", "HR 62"].map { Array($0.utf8) }

    @Test("the same lines fed whole, byte by byte, and split anywhere")
    func anySplit() {
        var whole = LineFramer()
        #expect(whole.feed(stream) == expected)

        var byteByByte = LineFramer()
        #expect(stream.flatMap { byteByByte.feed([$0]) } == expected)

        var generator = SplitMix64(seed: 7)
        for _ in 0..<200 {
            var framer = LineFramer()
            var lines: [[UInt8]] = []
            var rest = stream[...]
            while !rest.isEmpty {
                let size = Int.random(in: 1...max(1, rest.count), using: &generator)
                lines += framer.feed(rest.prefix(size))
                rest = rest.dropFirst(size)
            }
            #expect(lines == expected)
        }
    }

    @Test("an overlong line is dropped and counted; framing resumes at the next newline")
    func overlong() {
        var framer = LineFramer(maximumLength: 8)
        let lines = framer.feed(Array("HR 60\n0123456789abcdef\nHR 61\n".utf8))
        #expect(lines == [Array("HR 60".utf8), Array("HR 61".utf8)])
        #expect(framer.overlongLines == 1)
    }

    @Test("an unfinished line waits for its newline")
    func unfinished() {
        var framer = LineFramer()
        #expect(framer.feed(Array("HR 7".utf8)).isEmpty)
        #expect(framer.feed(Array("2\n".utf8)) == [Array("HR 72".utf8)])
    }
}
