import Timestamps

/// Writes a strip as a WFDB record (PhysioNet's format): a header file (`.hea`) and one signal
/// file (`.dat`) holding every channel, frame by frame.
///
/// - Format: 16 (two-byte samples) when every sample fits in −32767…32767, else 24 (three
///   bytes, −8388607…8388607), else 32 (four bytes); all little-endian two's complement, all
///   read by PhysioNet's `wfdb` Python package (4.x) and its C library. Each format's lowest
///   value (−32768, −2²³, −2³¹) is its invalid sample, so it is never a sample's value.
/// - Values: gain 1 ADU per unit, baseline 0, units `uV` or `mg`: the physical values read
///   back are the samples themselves, exactly.
/// - Time: the header's base time and date are the first sample's (UTC, to the microsecond),
///   the frequency the strip's; the whole strip is one continuous series from its first sample
///   to its last, each gap filled with the format's invalid sample in every channel (readers
///   see NaN there). A segment starts at the sample position nearest its start (one that would
///   land on the previous segment's last position takes the next), so its times are off by at
///   most half a sample period (less than one in that case).
/// - Each signal line carries the first sample and the 16-bit checksum of all of the signal's
///   values; `#` lines after them name the recording, the device and the person.
public struct WFDBWriter: Sendable {
    public init() {}

    /// The record named `recordName`: its header and signal files.
    /// - Throws: ``WaveformFileError/invalidRecordName(_:)`` for a name other than 1 to 64
    ///   letters, digits, `_` and `-`; ``WaveformFileError/sampleIsWFDBInvalidValue(_:)`` for a
    ///   sample of −2³¹; ``WaveformFileError/seriesTooLong(instants:limit:)`` when the gaps
    ///   would make the series longer than 2³¹ − 1 instants.
    public func write(_ strip: WaveformStrip, recordName: String) throws(WaveformFileError) -> WFDBRecord {
        guard (1...64).contains(recordName.utf8.count),
              recordName.utf8.allSatisfy({ Self.nameBytes.contains($0) })
        else { throw .invalidRecordName(recordName) }
        let format = try WFDBSignalFormat(fitting: strip)
        let grid = try SampleGrid(strip)
        let channels = strip.channelCount
        let width = format.bytesPerSample
        var signals: [UInt8] = []
        signals.reserveCapacity(grid.instantCount * channels * width)
        var sums = [Int64](repeating: 0, count: channels)
        grid.forEachInstant(of: strip) { samples in
            for channel in 0..<channels {
                let value = samples.map { $0[$0.startIndex + channel] } ?? format.invalidSample
                sums[channel] &+= Int64(value)
                let bits = UInt32(bitPattern: value)
                for byte in 0..<width { signals.append(UInt8(truncatingIfNeeded: bits >> (8 * byte))) }
            }
        }
        let signalFileName = recordName + ".dat"
        let start = strip.firstInstantNanoseconds
        var header = "\(recordName) \(channels) \(Self.number(strip.frequency)) \(grid.instantCount) "
        header += "\(Self.baseTime(start)) \(Self.baseDate(start))\n"
        for channel in 0..<channels {
            let checksum = Int16(truncatingIfNeeded: sums[channel])
            header += "\(signalFileName) \(format.rawValue) 1(0)/\(strip.kind.unit) \(format.rawValue) 0 "
            header += "\(strip.segments[0].samples[channel]) \(checksum) 0 \(Self.description(strip.kind, channel: channel))\n"
        }
        header += "# hrmd waveform strip: recording \(Self.comment(strip.recordingID))\n"
        header += "# device \(Self.comment(strip.deviceID))\n"
        if let person = strip.personName { header += "# person \(Self.comment(person))\n" }
        return WFDBRecord(name: recordName, format: format, header: header, signals: signals)
    }

    /// The bytes of a record name: ASCII letters, digits, `_` and `-`.
    static let nameBytes: Set<UInt8> = Set(Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-".utf8))

    /// A signal's description: as the EDF label.
    static func description(_ kind: WaveformKind, channel: Int) -> String { EDFPlusWriter.label(kind, channel: channel) }

    /// Text for a `#` line: control characters as spaces.
    static func comment(_ text: String) -> String {
        String(String.UnicodeScalarView(text.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7F ? " " : $0 }))
    }

    /// The frequency in plain decimal (no exponent): `130`, `12.5`.
    static func number(_ value: Double) -> String {
        if value == value.rounded() { return String(Int64(value)) }
        // Within the strip's frequency range Swift's shortest form has no exponent.
        return "\(value)"
    }

    /// `HH:MM:SS` with the microseconds when there are any (`10:00:00.25`), UTC, to the nearest microsecond.
    static func baseTime(_ nanoseconds: Int64) -> String {
        let text = RFC3339.string(from: WaveformStrip.timestamp(nearest: nanoseconds), fractionDigits: 6)
        // `YYYY-MM-DDTHH:MM:SS.ffffffZ`: the time of day, less trailing zeros.
        var time = Array(text.utf8.drop { $0 != UInt8(ascii: "T") }.dropFirst().dropLast())
        while time.last == UInt8(ascii: "0") { time.removeLast() }
        if time.last == UInt8(ascii: ".") { time.removeLast() }
        return String(decoding: time, as: UTF8.self)
    }

    /// `DD/MM/YYYY`, UTC (of the time ``baseTime(_:)`` gives).
    static func baseDate(_ nanoseconds: Int64) -> String {
        let days = floorDivide(WaveformStrip.timestamp(nearest: nanoseconds).microsecondsSinceEpoch, 86_400_000_000)
        let (year, month, day) = RFC3339.civilDate(fromDaysSinceEpoch: days)
        let yearDigits = String(year)
        return "\(EDFText.twoDigits(day))/\(EDFText.twoDigits(month))/" + String(repeating: "0", count: max(0, 4 - yearDigits.count)) + yearDigits
    }
}

/// A WFDB record as written: its header and signal files.
public struct WFDBRecord: Sendable, Hashable {
    /// The record's name, which its files are named after.
    public let name: String
    /// The signal file's format.
    public let format: WFDBSignalFormat
    /// The header file's text (ASCII lines, `\n` ends each).
    public let header: String
    /// The signal file's bytes.
    public let signals: [UInt8]

    /// The header file's name: `<name>.hea`.
    public var headerFileName: String { name + ".hea" }
    /// The signal file's name: `<name>.dat`, as the header names it.
    public var signalFileName: String { name + ".dat" }
    /// The header file's bytes.
    public var headerBytes: [UInt8] { Array(header.utf8) }
}

/// The WFDB signal formats the writer uses: samples of 16, 24 or 32 bits.
public enum WFDBSignalFormat: Int, Sendable, Hashable, CaseIterable {
    /// Two-byte samples, −32767…32767 (−32768 invalid).
    case format16 = 16
    /// Three-byte samples, −8388607…8388607 (−2²³ invalid).
    case format24 = 24
    /// Four-byte samples, −2³¹ + 1…2³¹ − 1 (−2³¹ invalid).
    case format32 = 32

    /// The narrowest format that holds every sample of `strip` as a valid value.
    init(fitting strip: WaveformStrip) throws(WaveformFileError) {
        var lowest = Int32.max, highest = Int32.min
        for segment in strip.segments {
            for sample in segment.samples {
                lowest = min(lowest, sample)
                highest = max(highest, sample)
            }
        }
        guard let format = Self.allCases.first(where: { $0.validRange.contains(lowest) && $0.validRange.contains(highest) }) else {
            throw .sampleIsWFDBInvalidValue(Int32.min)
        }
        self = format
    }

    /// The bytes of one sample.
    public var bytesPerSample: Int { rawValue / 8 }

    /// The value that marks a sample as invalid (no data): the format's lowest.
    public var invalidSample: Int32 {
        switch self {
        case .format16: -32768
        case .format24: -8_388_608
        case .format32: Int32.min
        }
    }

    /// The values a sample may take: all the format holds but the invalid one.
    public var validRange: ClosedRange<Int32> {
        switch self {
        case .format16: -32767...32767
        case .format24: -8_388_607...8_388_607
        case .format32: (Int32.min + 1)...Int32.max
        }
    }
}
