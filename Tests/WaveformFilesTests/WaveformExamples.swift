import Foundation
import WaveformFiles

/// The strips the tests write, and the files Tests/exports/check_waveform_file.py reads back:
/// ECG and acceleration, with and without gaps, and samples wider than 16 and 24 bits.
enum WaveformExamples {
    /// 2026-11-18T08:53:20.123456789Z: not on a whole second, to the nanosecond.
    static let start: Int64 = 1_795_000_000_123_456_789

    /// A strip of `kind` at `frequency` whose segments start `offset` nanoseconds after
    /// ``start`` with `count` instants each; `value(instant, channel)` gives each sample,
    /// `instant` counted over the whole strip.
    static func strip(
        _ kind: WaveformKind, frequency: Double, person: String? = "Ann Example", segments: [(offset: Int64, count: Int)],
        value: (Int, Int) -> Int32 = wave
    ) throws -> WaveformStrip {
        var instant = 0
        let channels = kind.channelCount
        let parts = segments.map { offset, count in
            var samples: [Int32] = []
            for _ in 0..<count {
                for channel in 0..<channels { samples.append(value(instant, channel)) }
                instant += 1
            }
            return StripSegment(startNanoseconds: start + offset, samples: samples)
        }
        return try WaveformStrip(
            recordingID: "3f1c2a7e-5b0d-4c8e-9a61-0d2b7c4e8f10", deviceID: "Polar H10 A1B2C3D4", personName: person, kind: kind,
            frequency: frequency, segments: parts)
    }

    /// A deterministic wiggle within ±2000 with a slow drift per channel.
    static func wave(_ instant: Int, _ channel: Int) -> Int32 {
        let mixed = (instant &* 2_654_435_761 &+ channel &* 40_503) >> 5
        return Int32(mixed % 4001 - 2000) + Int32(channel * 300)
    }

    /// Nanoseconds of `count` sample periods at `frequency`.
    static func periods(_ count: Double, at frequency: Double) -> Int64 { Int64((count * 1e9 / frequency).rounded()) }

    /// Every example, by name.
    static func all() throws -> [(name: String, strip: WaveformStrip)] {
        [
            // One segment: EDF+C, 8 records of 130 (the last padded by 40), WFDB format 16.
            ("ecg", try strip(.ecg, frequency: 130, segments: [(0, 1000)])),
            // A long gap (a new EDF+D record), then a short one inside the last record, off the
            // sample grid by 0.039 periods; the samples reach ±32767 (still format 16).
            ("ecg-gaps", try strip(.ecg, frequency: 130, person: nil, segments: [
                (0, 300), (periods(300, at: 130) + 5_250_000_000, 400),
                (periods(300, at: 130) + 5_250_000_000 + periods(399, at: 130) + 100_300_000, 200),
            ]) { instant, channel in instant == 7 ? 32767 : instant == 8 ? -32767 : wave(instant, channel) }),
            // Three axes at 52 Hz, one segment.
            ("acc", try strip(.acceleration, frequency: 52, segments: [(0, 260)])),
            // A gap of 2.5 s, then a segment right after the previous one's last sample.
            ("acc-gaps", try strip(.acceleration, frequency: 50, segments: [
                (0, 120), (periods(120, at: 50) + 2_500_000_000, 75), (periods(120 + 75, at: 50) + 2_500_000_000, 60),
            ])),
            // Beyond 16 bits: EDF scales (not exact), WFDB format 24.
            ("ecg-wide", try strip(.ecg, frequency: 130, segments: [(0, 500), (periods(500, at: 130) + 3_000_000_000, 300)]) { instant, channel in
                wave(instant, channel) * 50
            }),
            // Beyond 24 bits: EDF scales, WFDB format 32.
            ("acc-wide", try strip(.acceleration, frequency: 25, segments: [(0, 100)]) { instant, channel in
                instant == 3 ? 20_000_000 : instant == 4 ? -9_000_000 : wave(instant, channel)
            }),
        ]
    }

    /// EXPECT.json of check_waveform_file.py: the frequency, channels, unit, whether values
    /// must read back exactly, and each segment's start and samples.
    static func expectation(_ strip: WaveformStrip, exact: Bool) throws -> Data {
        let expectation: [String: Any] = [
            "frequency": strip.frequency,
            "channels": strip.kind.channelNames,
            "unit": strip.kind.unit,
            "exact": exact,
            "segments": strip.segments.map { ["start_ns": $0.startNanoseconds, "samples": $0.samples.map(Int.init)] as [String: Any] },
        ]
        return try JSONSerialization.data(withJSONObject: expectation, options: [.sortedKeys])
    }

    /// Writes each example's files into `directory`: `NAME.edf` with `NAME.edf.expect.json`
    /// (exact as the writer said), and `NAME.hea`/`NAME.dat` (record NAME with `-` as `_`),
    /// `NAME.csv` and `NAME.fhir.json` with `NAME.expect.json` (always exact). Returns the
    /// names written.
    @discardableResult
    static func write(into directory: URL) throws -> [String] {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        var written: [String] = []
        func save(_ name: String, _ data: Data) throws {
            try data.write(to: directory.appendingPathComponent(name))
            written.append(name)
        }
        for (name, strip) in try all() {
            let edf = try EDFPlusWriter().write(strip)
            try save("\(name).edf", Data(edf.bytes))
            try save("\(name).edf.expect.json", try expectation(strip, exact: edf.isExact))
            let record = try WFDBWriter().write(strip, recordName: name.replacingOccurrences(of: "-", with: "_"))
            try save(record.headerFileName, Data(record.headerBytes))
            try save(record.signalFileName, Data(record.signals))
            try save("\(name).csv", Data(WaveformCSVWriter().write(strip).utf8))
            try save("\(name).fhir.json", Data(try FHIRWaveformWriter().write(strip).utf8))
            try save("\(name).expect.json", try expectation(strip, exact: true))
        }
        return written
    }
}
