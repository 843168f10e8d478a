import Foundation
import JSONLines
import Testing
import Timestamps

@testable import WaveformFiles

/// The bytes of `bytes` from `offset`, `width` of them, as ASCII.
private func field(_ bytes: [UInt8], _ offset: Int, _ width: Int) -> String {
    String(decoding: bytes[offset..<offset + width], as: UTF8.self)
}

/// `text` padded with spaces to `width`, as EDF's fields are.
private func padded(_ text: String, _ width: Int) -> String { text + String(repeating: " ", count: width - text.utf8.count) }

/// An ECG strip of one segment.
private func ecg(_ samples: [Int32], start: Int64 = 1_795_000_000_000_000_000, frequency: Double = 10) throws(WaveformFileError) -> WaveformStrip {
    try WaveformStrip(
        recordingID: "r", deviceID: "d", kind: .ecg, frequency: frequency, segments: [StripSegment(startNanoseconds: start, samples: samples)])
}

private func example(_ name: String) throws -> WaveformStrip {
    try #require(try WaveformExamples.all().first { $0.name == name }?.strip)
}

@Suite("Waveform strips: what a strip may be")
struct WaveformStripTests {
    static func segment(_ start: Int64, _ samples: [Int32]) -> StripSegment { StripSegment(startNanoseconds: start, samples: samples) }

    static func strip(_ segments: [StripSegment], kind: WaveformKind = .ecg, frequency: Double = 100) throws(WaveformFileError) -> WaveformStrip {
        try WaveformStrip(recordingID: "r", deviceID: "d", kind: kind, frequency: frequency, segments: segments)
    }

    @Test("a strip is refused, with one line saying why, when it breaks a rule")
    func refused() {
        let cases: [([StripSegment], WaveformKind, Double, WaveformFileError)] = [
            ([], .ecg, 100, .noSegments),
            ([Self.segment(0, [1]), Self.segment(1_000_000_000, [])], .ecg, 100, .emptySegment(index: 1)),
            ([Self.segment(0, [1, 2, 3, 4])], .acceleration, 100, .partialInstant(segment: 0, sampleCount: 4, channelCount: 3)),
            // The first segment's last instant is at 10 ms: the next must start after it.
            ([Self.segment(0, [1, 2]), Self.segment(10_000_000, [3])], .ecg, 100, .segmentOutOfOrder(index: 1)),
            ([Self.segment(50_000_000, [1]), Self.segment(0, [3])], .ecg, 100, .segmentOutOfOrder(index: 1)),
            ([Self.segment(0, [1])], .ecg, 0, .unusableFrequency(0)),
            ([Self.segment(0, [1])], .ecg, 2e6, .unusableFrequency(2e6)),
            ([Self.segment(Int64.max - 5, [1, 2])], .ecg, 100, .timeOutOfRange(segment: 0)),
            ([Self.segment(Int64.min, [1]), Self.segment(Int64.max - 1, [2])], .ecg, 100, .timeOutOfRange(segment: 1)),
        ]
        for (segments, kind, frequency, error) in cases {
            #expect(throws: error) { try Self.strip(segments, kind: kind, frequency: frequency) }
            #expect(!error.description.isEmpty && !error.description.contains("\n"))
        }
        #expect(throws: WaveformFileError.self) { try Self.strip([Self.segment(0, [1])], frequency: .nan) }
    }

    @Test("instants are at start + i / frequency, to the nanosecond; a segment may start one period after the last")
    func times() throws {
        let strip = try Self.strip([Self.segment(1000, [1, 2, 3]), Self.segment(1000 + 3 * 7_692_308, [4])], frequency: 130)
        #expect(strip.time(ofInstant: 1, in: strip.segments[0]) == 1000 + 7_692_308)
        #expect(strip.time(ofInstant: 2, in: strip.segments[0]) == 1000 + 15_384_615)
        #expect(strip.instantCount == 4 && strip.lastInstantNanoseconds == 1000 + 3 * 7_692_308)
        #expect(strip.segments[0].start == Timestamp(microsecondsSinceEpoch: 1))
        #expect(WaveformStrip.timestamp(nearest: 1_499) == Timestamp(microsecondsSinceEpoch: 1))
        #expect(WaveformStrip.timestamp(nearest: 1_500) == Timestamp(microsecondsSinceEpoch: 2))
        #expect(WaveformStrip.timestamp(nearest: -1_600) == Timestamp(microsecondsSinceEpoch: -2))
        #expect(WaveformKind.acceleration.channelNames == ["X", "Y", "Z"] && WaveformKind.ecg.unit == "uV")
    }

    @Test("the single series of WFDB and FHIR: segments at their nearest instants, never on the previous one's")
    func grid() throws {
        // 100 Hz: the second segment starts 5.4 periods after the first's last instant, the third 0.3 after the second's.
        let strip = try Self.strip([
            Self.segment(0, [1, 2]), Self.segment(10_000_000 + 54_000_000, [3]), Self.segment(64_000_000 + 3_000_000, [4]),
        ])
        let grid = try SampleGrid(strip)
        #expect(grid.segmentStarts == [0, 6, 7], "6.4 → 6; 6.7 would round to 7, and 7 is free")
        #expect(grid.instantCount == 8)
        var seen: [Int32?] = []
        grid.forEachInstant(of: strip) { seen.append($0?.first) }
        #expect(seen == [1, 2, nil, nil, nil, nil, 3, 4])
        let close = try Self.strip([Self.segment(0, [1]), Self.segment(4_000_000, [2])])
        #expect(try SampleGrid(close).segmentStarts == [0, 1], "0.4 periods after the last goes to the next instant")
        let far = try Self.strip([Self.segment(0, [1]), Self.segment(3_000_000_000_000, [2])], frequency: 1_000_000)
        #expect(throws: WaveformFileError.self) { try SampleGrid(far) }
    }
}

@Suite("EDF+ files")
struct EDFPlusWriterTests {
    @Test("the header's fields at their offsets: version, patient, recording, start, sizes, EDF+C, the signals")
    func header() throws {
        let strip = try example("ecg")
        let file = try EDFPlusWriter().write(strip)
        let bytes = file.bytes
        #expect(file.isExact && file.isContinuous)
        #expect(file.recordSeconds == 1 && file.samplesPerRecord == 130)
        #expect(file.recordCount == 8 && file.paddedInstantCount == 40, "1000 samples: 7 full records and 90 in the eighth")
        #expect(file.physicalDimension == "uV")
        let annotationSamples = Int(field(bytes, 256 + 2 * 216 + 8, 8).trimmingCharacters(in: .whitespaces)) ?? 0
        #expect(bytes.count == 768 + 8 * (2 * 130 + 2 * annotationSamples))
        #expect(field(bytes, 0, 8) == padded("0", 8))
        #expect(field(bytes, 8, 80) == padded("X X X Ann_Example", 80))
        #expect(field(bytes, 88, 80) == padded("Startdate 18-NOV-2026 3f1c2a7e-5b0d-4c8e-9a61-0d2b7c4e8f10 X Polar_H10_A1B2C3D4", 80))
        #expect(field(bytes, 168, 8) == "18.11.26")
        #expect(field(bytes, 176, 8) == "11.06.40")
        #expect(field(bytes, 184, 8) == padded("768", 8))
        #expect(field(bytes, 192, 44) == padded("EDF+C", 44))
        #expect(field(bytes, 236, 8) == padded("8", 8))
        #expect(field(bytes, 244, 8) == padded("1", 8))
        #expect(field(bytes, 252, 4) == padded("2", 4))
        // Per signal: 16 label, 80 transducer, 8 dimension, 8+8 physical, 8+8 digital, 80 prefiltering, 8 samples, 32 reserved.
        #expect(field(bytes, 256, 32) == padded("ECG", 16) + "EDF Annotations ")
        #expect(field(bytes, 256 + 32, 80) == padded("ECG electrodes", 80))
        #expect(field(bytes, 256 + 192, 16) == padded("uV", 8) + padded("", 8))
        #expect(field(bytes, 256 + 208, 16) == padded("-32768", 8) + padded("-32768", 8))
        #expect(field(bytes, 256 + 224, 16) == padded("32767", 8) + padded("32767", 8))
        #expect(field(bytes, 256 + 240, 16) == padded("-32768", 8) + padded("-32768", 8))
        #expect(field(bytes, 256 + 256, 16) == padded("32767", 8) + padded("32767", 8))
        #expect(field(bytes, 256 + 432, 8) == padded("130", 8))
        #expect(field(bytes, 256 + 448, 64) == padded("", 64))
        #expect(bytes[0..<768].allSatisfy { (32...126).contains($0) })
    }

    @Test("data records: the samples themselves, 16-bit little-endian; each record's onset; the last padded and marked")
    func records() throws {
        let strip = try example("ecg")
        let file = try EDFPlusWriter().write(strip)
        let record = try EDFRecords(file)
        let samples = strip.segments[0].samples
        #expect(record.samples(0, signal: 0) == Array(samples[0..<130]))
        #expect(record.samples(7, signal: 0) == Array(samples[910..<1000]) + Array(repeating: samples[999], count: 40))
        #expect(record.onsets == (0..<8).map { "\($0).123456789" })
        #expect(record.annotations(0) == ["+0.123456789\u{14}\u{14}"])
        // Sample 90 of the record is 90/130 s after its onset; 40 samples last 0.307692308 s.
        #expect(record.annotations(7) == ["+7.123456789\u{14}\u{14}", "+7.815764481\u{15}0.307692308\u{14}No data (padding)\u{14}"])
    }

    @Test("gaps: EDF+D, a segment starts a record at its own onset, or goes on in the last one after a short gap")
    func gaps() throws {
        let strip = try example("ecg-gaps")
        let file = try EDFPlusWriter().write(strip)
        let records = try EDFRecords(file)
        #expect(!file.isContinuous && file.isExact)
        #expect(field(file.bytes, 192, 5) == "EDF+D")
        // 300 samples: 3 records; 400 more 7.557692308 s later: 4; 200 more in the 4th's rest (108) and an 8th.
        #expect(file.recordCount == 8)
        #expect(records.onsets == [
            "0.123456789", "1.123456789", "2.123456789", "7.681149097", "8.681149097", "9.681149097", "10.681149097", "11.681149097",
        ])
        #expect(file.paddedInstantCount == 8 * 130 - 900)
        let padding = (0..<8).flatMap { records.annotations($0).dropFirst() }
        #expect(padding == [
            "+2.431149097\u{15}0.692307692\u{14}No data (padding)\u{14}",  // after the first segment: 90 positions
            "+10.758072174\u{15}0.092307692\u{14}No data (padding)\u{14}",  // the short gap: positions 10 to 21
            "+12.388841405\u{15}0.292307692\u{14}No data (padding)\u{14}",  // after the last: 38 positions
        ])
        // The third segment starts 13.039 periods after the second's last sample: at position 22, not 23.
        let sixth = records.samples(6, signal: 0)
        let third = strip.segments[2].samples
        #expect(Array(sixth[22..<130]) == Array(third[0..<108]))
        #expect(Array(sixth[10..<22]) == Array(repeating: strip.segments[1].samples[399], count: 12), "the gap holds the sample before it")
        #expect(records.samples(0, signal: 0)[7] == 32767 && records.samples(0, signal: 0)[8] == -32767)
    }

    @Test("acceleration: three signals in mg, an annotation signal last; a gap of none continues the record")
    func acceleration() throws {
        let strip = try example("acc-gaps")
        let file = try EDFPlusWriter().write(strip)
        let records = try EDFRecords(file)
        #expect(file.physicalDimension == "mg" && file.samplesPerRecord == 50)
        #expect(field(file.bytes, 256, 64) == padded("Accel X", 16) + padded("Accel Y", 16) + padded("Accel Z", 16) + "EDF Annotations ")
        #expect(field(file.bytes, 256 + 64 + 320, 24) == padded("mg", 8) + padded("mg", 8) + padded("mg", 8))
        // 120 samples: records 0-2; 75: records 3-4 (25 in the 5th); 60 right after: the 5th's rest and a 6th.
        #expect(file.recordCount == 6 && file.paddedInstantCount == 6 * 50 - 255)
        #expect(records.samples(4, signal: 2)[25] == strip.segments[2].samples[2], "Z of the third segment's first instant")
        #expect(records.annotations(4).count == 1, "no padding where a segment follows the last sample at once")
    }

    @Test("samples beyond 16 bits are scaled from their lowest to their highest, and the file says it is not exact")
    func scaled() throws {
        let strip = try example("ecg-wide")
        let file = try EDFPlusWriter().write(strip)
        #expect(!file.isExact)
        let all = strip.segments.flatMap(\.samples)
        let lowest = try #require(all.min()), highest = try #require(all.max())
        #expect(field(file.bytes, 256 + 208, 8) == padded(String(lowest), 8))
        #expect(field(file.bytes, 256 + 224, 8) == padded(String(highest), 8))
        let scale = try EDFChannelScale(strip, channel: 0)
        #expect(scale.digital(lowest) == -32768 && scale.digital(highest) == 32767)
        let step = Double(highest - lowest) / 65535
        for sample in all.prefix(200) {
            let back = Double(Int(scale.digital(sample)) + 32768) * step + Double(lowest)
            #expect(abs(back - Double(sample)) <= step / 2 + 1e-9)
        }
        let flat = try EDFChannelScale(try ecg([40_000, 40_000]), channel: 0)
        #expect(flat.physicalMinimum == 40_000 && flat.physicalMaximum == 40_001 && !flat.isExact)
        let huge = try ecg([0, -10_000_000])
        #expect(throws: WaveformFileError.sampleBeyondEDFRange(-10_000_000)) { try EDFPlusWriter().write(huge) }
    }

    @Test("the record: the shortest whole seconds holding whole samples; the years EDF names")
    func recordShapeAndYears() throws {
        func shape(_ frequency: Double) throws -> [Int] {
            let (seconds, samples) = try EDFPlusWriter.recordShape(frequency: frequency)
            return [seconds, samples]
        }
        #expect(try shape(130) == [1, 130])
        #expect(try shape(12.5) == [2, 25])
        #expect(try shape(0.3) == [10, 3])
        #expect(try shape(1000.0 / 3) == [3, 1000])
        #expect(throws: WaveformFileError.noWholeSamplesPerRecord(frequency: 130.000123)) { try EDFPlusWriter.recordShape(frequency: 130.000123) }
        #expect(throws: WaveformFileError.noWholeSamplesPerRecord(frequency: 0.01)) { try EDFPlusWriter.recordShape(frequency: 0.01) }
        for (seconds, year) in [(Int64(315_532_800), Int64(1980)), (3_471_292_800, 2080)] {
            let strip = try ecg([1], start: seconds * 1_000_000_000, frequency: 1)
            if year < 1985 {
                #expect(throws: WaveformFileError.yearOutsideEDF(year: year)) { try EDFPlusWriter().write(strip) }
            } else {
                #expect(field(try EDFPlusWriter().write(strip).bytes, 168, 8) == "01.01.80", "2080 as yy = 80")
            }
        }
    }

    @Test("text as EDF holds it: subfields without spaces, printable ASCII, X when empty; seconds exact to the nanosecond")
    func text() {
        #expect(EDFText.subfield("Anna Maria Müller", limit: 74) == "Anna_Maria_M_ller")
        #expect(EDFText.subfield("", limit: 10) == "X" && EDFText.subfield("abcdef", limit: 3) == "abc")
        #expect(EDFPlusWriter.patient(nil) == "X X X X")
        #expect(EDFText.field("é\u{1}", width: 4) == Array("__  ".utf8))
        #expect(EDFText.seconds(0) == "0" && EDFText.seconds(1_500_000_000) == "1.5" && EDFText.seconds(123_456_789) == "0.123456789")
        let long = EDFPlusWriter.recording(
            year: 2026, month: 1, day: 2, recordingID: String(repeating: "r", count: 50), deviceID: String(repeating: "d", count: 50))
        #expect(long.utf8.count == 80 && long.hasPrefix("Startdate 02-JAN-2026 " + String(repeating: "r", count: 36) + " X ddd"))
    }
}

/// An EDF+ file's data records read back: each signal's digital samples, each record's TALs.
private struct EDFRecords {
    let bytes: [UInt8]
    let counts: [Int]
    let headerSize: Int
    let recordSize: Int

    init(_ file: EDFPlusFile) throws {
        let bytes = file.bytes
        let signals = try #require(Int(field(bytes, 252, 4).trimmingCharacters(in: .whitespaces)))
        let counts = try (0..<signals).map { try #require(Int(field(bytes, 256 + signals * 216 + 8 * $0, 8).trimmingCharacters(in: .whitespaces))) }
        self.bytes = bytes
        self.counts = counts
        headerSize = 256 * (signals + 1)
        recordSize = 2 * counts.reduce(0, +)
        #expect(bytes.count == headerSize + file.recordCount * recordSize)
    }

    func samples(_ record: Int, signal: Int) -> [Int32] {
        let start = headerSize + record * recordSize + 2 * counts[..<signal].reduce(0, +)
        return (0..<counts[signal]).map { Int32(Int16(bitPattern: UInt16(bytes[start + 2 * $0]) | UInt16(bytes[start + 2 * $0 + 1]) << 8)) }
    }

    /// The TALs of a record's annotation signal (the last), each without its final zero.
    func annotations(_ record: Int) -> [String] {
        let start = headerSize + (record + 1) * recordSize - 2 * counts[counts.count - 1]
        let signal = bytes[start..<start + 2 * counts[counts.count - 1]]
        return signal.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
    }

    /// Each record's onset, from its time-keeping TAL.
    var onsets: [String] {
        let records = (bytes.count - headerSize) / recordSize
        return (0..<records).map { annotations($0).first.map { String($0.dropFirst().prefix { $0 != "\u{14}" }) } ?? "" }
    }
}

@Suite("WFDB records")
struct WFDBWriterTests {
    @Test("format 16, gain 1 per µV: the header's lines, the samples little-endian, the checksum")
    func continuous() throws {
        let strip = try example("ecg")
        let record = try WFDBWriter().write(strip, recordName: "ecg")
        let samples = strip.segments[0].samples
        #expect(record.format == .format16 && record.headerFileName == "ecg.hea" && record.signalFileName == "ecg.dat")
        let checksum = Int16(truncatingIfNeeded: samples.reduce(Int64(0)) { $0 + Int64($1) })
        #expect(record.header == """
            ecg 1 130 1000 11:06:40.123457 18/11/2026
            ecg.dat 16 1(0)/uV 16 0 \(samples[0]) \(checksum) 0 ECG
            # hrmd waveform strip: recording 3f1c2a7e-5b0d-4c8e-9a61-0d2b7c4e8f10
            # device Polar H10 A1B2C3D4
            # person Ann Example

            """)
        #expect(record.signals.count == 2000)
        #expect(record.signals[0] == UInt8(truncatingIfNeeded: samples[0]) && record.signals[1] == UInt8(truncatingIfNeeded: samples[0] >> 8))
    }

    @Test("gaps hold the invalid sample in every channel, so the record is one series")
    func gaps() throws {
        let strip = try example("acc-gaps")
        let record = try WFDBWriter().write(strip, recordName: "acc_gaps")
        // 120 instants, 2.5 s (125 instants) of gap, 75, and 60 right after.
        #expect(record.header.hasPrefix("acc_gaps 3 50 380 11:06:40.123457 18/11/2026\nacc_gaps.dat 16 1(0)/mg 16 0 "))
        #expect(record.header.split(separator: "\n").filter { $0.hasPrefix("acc_gaps.dat 16 1(0)/mg 16 0 ") }.count == 3)
        #expect(record.header.contains(" 0 Accel X\n") && record.header.contains(" 0 Accel Z\n"))
        #expect(record.signals.count == 380 * 3 * 2)
        let values = stride(from: 0, to: record.signals.count, by: 2).map {
            Int16(bitPattern: UInt16(record.signals[$0]) | UInt16(record.signals[$0 + 1]) << 8)
        }
        #expect(values[120 * 3..<245 * 3].allSatisfy { $0 == -32768 })
        #expect(Array(values[245 * 3..<246 * 3]) == strip.segments[1].samples[0..<3].map { Int16($0) })
        #expect(Array(values[320 * 3..<321 * 3]) == strip.segments[2].samples[0..<3].map { Int16($0) })
        #expect(!values[..<(120 * 3)].contains(-32768))
    }

    @Test("the narrowest format whose invalid sample no sample is: 16, 24, 32; −2³¹ is refused")
    func formats() throws {
        func format(_ samples: [Int32]) throws(WaveformFileError) -> WFDBRecord {
            try WFDBWriter().write(try ecg(samples, start: 0, frequency: 12.5), recordName: "r")
        }
        #expect(try format([32767, -32767]).format == .format16)
        #expect(try format([-32768]).format == .format24)
        let wide = try format([8_388_608, 1])
        #expect(wide.format == .format32 && wide.signals == [0, 0, 0x80, 0, 1, 0, 0, 0])
        let three = try format([-8_388_607, 2])
        #expect(three.format == .format24 && three.signals == [1, 0, 0x80, 2, 0, 0])
        #expect(three.header.hasPrefix("r 1 12.5 2 00:00:00 01/01/1970\n"))
        #expect(throws: WaveformFileError.sampleIsWFDBInvalidValue(Int32.min)) { try format([Int32.min]) }
        #expect(WFDBSignalFormat.format24.invalidSample == -8_388_608)
    }

    @Test("record names are letters, digits, _ and -")
    func names() throws {
        let strip = try example("acc")
        for bad in ["", "a b", "ü", "a/b", String(repeating: "a", count: 65)] {
            #expect(throws: WaveformFileError.invalidRecordName(bad)) { try WFDBWriter().write(strip, recordName: bad) }
        }
        #expect(try WFDBWriter().write(strip, recordName: "Strap_7-a").name == "Strap_7-a")
        #expect(WFDBWriter.comment("a\nb\u{7F}") == "a b ")
    }
}

@Suite("CSV files")
struct WaveformCSVWriterTests {
    @Test("a header, then a line per instant: RFC 3339 time to the microsecond and a column per channel; gaps have no lines")
    func lines() throws {
        let ecg = WaveformCSVWriter().write(try example("ecg"))
        let lines = ecg.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.count == 1002 && lines.last == "")
        #expect(lines[0] == "time,ecg_uv")
        let samples = try example("ecg").segments[0].samples
        #expect(lines[1] == "2026-11-18T11:06:40.123457Z,\(samples[0])")
        #expect(lines[2] == "2026-11-18T11:06:40.131149Z,\(samples[1])", "7692308 ns later, rounded to the microsecond")
        let strip = try example("acc-gaps")
        let acc = WaveformCSVWriter().write(strip).split(separator: "\n")
        #expect(acc.count == 1 + 255 && acc[0] == "time,x_mg,y_mg,z_mg")
        let first = strip.segments[1]
        #expect(acc[121] == "2026-11-18T11:06:45.023457Z," + first.samples[0..<3].map(String.init).joined(separator: ","))
        #expect(WaveformCSVWriter.columns(.acceleration) == ["time", "x_mg", "y_mg", "z_mg"])
    }
}

@Suite("FHIR Observations")
struct FHIRWaveformWriterTests {
    static func object(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }

    @Test("ECG: final, MDC 131328, its period, the person, the device, the samples with E in the gaps")
    func ecg() throws {
        let strip = try example("ecg-gaps")
        let text = try FHIRWaveformWriter().write(strip)
        #expect(text.hasPrefix("{\"resourceType\":\"Observation\",") && text.hasSuffix("}\n"))
        let observation = try Self.object(text)
        #expect(observation["status"] as? String == "final")
        let code = try #require((observation["code"] as? [String: Any])?["coding"] as? [[String: Any]])
        #expect(code.first?["system"] as? String == "urn:oid:2.16.840.1.113883.6.24" && code.first?["code"] as? String == "131328")
        #expect(observation["subject"] == nil, "no person, no subject")
        #expect((observation["device"] as? [String: Any])?["display"] as? String == "Polar H10 A1B2C3D4")
        let period = try #require(observation["effectivePeriod"] as? [String: String])
        #expect(period["start"] == "2026-11-18T11:06:40.123457Z")
        #expect(period["end"] == RFC3339.string(from: WaveformStrip.timestamp(nearest: strip.lastInstantNanoseconds), fractionDigits: 6))
        let sampled = try #require(observation["valueSampledData"] as? [String: Any])
        #expect(text.contains("\"period\":\(1000.0 / 130),\"factor\":1,\"dimensions\":1,"), "the period as Swift's shortest form of the double")
        #expect(sampled["factor"] as? Int == 1 && sampled["dimensions"] as? Int == 1)
        let origin = try #require(sampled["origin"] as? [String: Any])
        #expect(origin["code"] as? String == "uV" && origin["system"] as? String == "http://unitsofmeasure.org" && origin["value"] as? Int == 0)
        let data = try #require(sampled["data"] as? String).split(separator: " ")
        let grid = try SampleGrid(strip)
        #expect(data.count == grid.instantCount)
        #expect(data.filter { $0 == "E" }.count == grid.instantCount - strip.instantCount)
        #expect(data[0] == "\(strip.segments[0].samples[0])" && data[300] == "E")
        #expect(data[grid.segmentStarts[1]] == "\(strip.segments[1].samples[0])")
    }

    @Test("acceleration: a component per axis, each its own SampledData in m[g]; the person as subject")
    func acceleration() throws {
        let strip = try example("acc")
        let observation = try Self.object(try FHIRWaveformWriter().write(strip))
        #expect(observation["valueSampledData"] == nil && observation["category"] == nil)
        #expect((observation["subject"] as? [String: Any])?["display"] as? String == "Ann Example")
        let components = try #require(observation["component"] as? [[String: Any]])
        #expect(components.count == 3)
        for (axis, component) in components.enumerated() {
            #expect((component["code"] as? [String: Any])?["text"] as? String == "Acceleration, \(["X", "Y", "Z"][axis]) axis")
            let sampled = try #require(component["valueSampledData"] as? [String: Any])
            #expect((sampled["origin"] as? [String: Any])?["code"] as? String == "m[g]")
            let data = try #require(sampled["data"] as? String).split(separator: " ").compactMap { Int32($0) }
            #expect(data == stride(from: axis, to: strip.segments[0].samples.count, by: 3).map { strip.segments[0].samples[$0] })
        }
        let members = try FHIRWaveformWriter().observation(strip)
        #expect(members.map(\.0) == ["resourceType", "identifier", "status", "code", "subject", "effectivePeriod", "device", "component"])
    }
}

@Suite("Example files for check_waveform_file.py")
struct WaveformExportTests {
    /// Where the files go: set HRMD_WAVEFORM_EXPORT_DIR to write them, then run
    /// Tests/exports/check_waveform_file.py on each.
    static let directory = ProcessInfo.processInfo.environment["HRMD_WAVEFORM_EXPORT_DIR"]

    @Test(
        "every example in every format, with its EXPECT.json",
        .enabled(if: WaveformExportTests.directory != nil, "HRMD_WAVEFORM_EXPORT_DIR is not set"))
    func write() throws {
        let directory = URL(fileURLWithPath: try #require(Self.directory))
        let written = try WaveformExamples.write(into: directory)
        let examples = try WaveformExamples.all().count
        #expect(written.count == examples * 7)
        for name in written {
            #expect(FileManager.default.fileExists(atPath: directory.appendingPathComponent(name).path))
        }
    }
}
