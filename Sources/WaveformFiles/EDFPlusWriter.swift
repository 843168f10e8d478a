import Timestamps

/// Writes a strip as an EDF+ file (European Data Format plus, as its specification defines
/// it): a 256-byte header, 256 bytes more per signal, then data records of 16-bit
/// little-endian samples.
///
/// - Signals: one ordinary signal per channel (`ECG`, or `Accel X`, `Accel Y`, `Accel Z`) with
///   physical dimension `uV` or `mg`, digital range −32768…32767, then the `EDF Annotations`
///   signal EDF+ requires.
/// - Values: when every sample of a channel fits in 16 bits the mapping is 1:1 (physical
///   minimum and maximum equal the digital ones, −32768 and 32767), so each value reads back
///   exactly. Otherwise the channel's physical range is its lowest to its highest sample and
///   values are scaled onto the 65,536 digital steps: each reads back within one step,
///   (maximum − minimum) / 65535 of the unit. ``EDFPlusFile/isExact`` says which.
/// - Data records: the shortest whole number of seconds that holds a whole number of samples
///   (1 s, 130 samples, at 130 Hz). Each record's time-keeping annotation gives its onset.
/// - One segment gives EDF+C. Gaps give EDF+D: a segment starts a new record at its own start,
///   unless it starts inside the previous segment's last record (a gap shorter than that
///   record's rest), where it continues that record from the nearest sample position (its
///   times off by at most half a sample period).
/// - Padding: a record that a segment's end (or such a short gap) leaves part empty is filled
///   by repeating the last sample before the empty part, and an annotation
///   ``paddingAnnotation`` with its onset and duration marks those instants as no data.
/// - Header: the start is the first sample's second (UTC, as EDF has no time zone); the first
///   record's onset gives the fraction. Patient `X X X name` (the person's name, or X);
///   recording `Startdate dd-MMM-yyyy <recording id> X <device id>`. Characters outside
///   printable ASCII, and spaces inside a subfield, become `_`; the recording id is cut to 36
///   characters and the device id to what is left of the 80.
public struct EDFPlusWriter: Sendable {
    /// The longest data record the writer chooses, in seconds.
    public static let longestRecordSeconds = 60
    /// The text of the annotations that mark padded instants.
    public static let paddingAnnotation = "No data (padding)"
    /// The most data records the header's 8-character count can say.
    public static let mostRecords = 99_999_999
    /// The years EDF's start date (`dd.mm.yy`) can name.
    public static let years: ClosedRange<Int64> = 1985...2084

    public init() {}

    /// The file and what it says of its values.
    /// - Throws: ``WaveformFileError`` when the frequency fits no data record, the start is
    ///   outside ``years``, a sample is beyond the header's physical range, or the strip needs
    ///   more than ``mostRecords`` data records.
    public func write(_ strip: WaveformStrip) throws(WaveformFileError) -> EDFPlusFile {
        let fileStart = floorDivide(strip.firstInstantNanoseconds, 1_000_000_000)
        let (year, month, day) = RFC3339.civilDate(fromDaysSinceEpoch: floorDivide(fileStart, 86_400))
        guard Self.years.contains(year) else { throw .yearOutsideEDF(year: year) }
        let (recordSeconds, samplesPerRecord) = try Self.recordShape(frequency: strip.frequency)
        let layout = EDFRecordLayout(strip, fileStartNanoseconds: fileStart * 1_000_000_000, recordSeconds: recordSeconds,
                                     samplesPerRecord: samplesPerRecord)
        guard layout.records.count <= Self.mostRecords else { throw .tooManyEDFRecords(layout.records.count) }
        var scales: [EDFChannelScale] = []
        for channel in 0..<strip.channelCount { scales.append(try EDFChannelScale(strip, channel: channel)) }
        let annotations = layout.records.map { layout.annotations(of: $0, frequency: strip.frequency) }
        let annotationBytes = annotations.map(\.count).max() ?? 0
        let annotationSamples = (annotationBytes + 1) / 2

        var bytes = EDFHeader(
            patient: Self.patient(strip.personName),
            recording: Self.recording(year: year, month: month, day: day, recordingID: strip.recordingID, deviceID: strip.deviceID),
            start: fileStart, continuous: strip.segments.count == 1, recordCount: layout.records.count, recordSeconds: recordSeconds,
            signals: scales.enumerated().map { channel, scale in
                EDFHeader.Signal(
                    label: Self.label(strip.kind, channel: channel), transducer: Self.transducer(strip.kind), dimension: strip.kind.unit,
                    physicalMinimum: scale.physicalMinimum, physicalMaximum: scale.physicalMaximum, samplesPerRecord: samplesPerRecord)
            } + [EDFHeader.Signal.annotations(samplesPerRecord: annotationSamples)]
        ).bytes
        let recordSize = 2 * (samplesPerRecord * strip.channelCount + annotationSamples)
        bytes.reserveCapacity(bytes.count + recordSize * layout.records.count)
        var digital = [Int16](repeating: 0, count: samplesPerRecord)
        for (record, annotation) in zip(layout.records, annotations) {
            for (channel, scale) in scales.enumerated() {
                layout.fill(&digital, from: record, channel: channel, of: strip, scale: scale)
                for value in digital {
                    let bits = UInt16(bitPattern: value)
                    bytes.append(UInt8(truncatingIfNeeded: bits))
                    bytes.append(UInt8(truncatingIfNeeded: bits >> 8))
                }
            }
            bytes.append(contentsOf: annotation)
            bytes.append(contentsOf: repeatElement(0, count: annotationSamples * 2 - annotation.count))
        }
        return EDFPlusFile(
            bytes: bytes, isExact: scales.allSatisfy(\.isExact), isContinuous: strip.segments.count == 1, recordSeconds: recordSeconds,
            samplesPerRecord: samplesPerRecord, recordCount: layout.records.count,
            paddedInstantCount: layout.records.count * samplesPerRecord - strip.instantCount, physicalDimension: strip.kind.unit)
    }

    /// The shortest data record of whole seconds that holds a whole number of samples, and that number.
    static func recordShape(frequency: Double) throws(WaveformFileError) -> (seconds: Int, samples: Int) {
        for seconds in 1...longestRecordSeconds {
            let samples = frequency * Double(seconds)
            let whole = samples.rounded()
            if whole >= 1, abs(samples - whole) <= 1e-9 * samples { return (seconds, Int(whole)) }
        }
        throw .noWholeSamplesPerRecord(frequency: frequency)
    }

    /// EDF+'s patient field: code, sex and birth date unknown, then the name.
    static func patient(_ name: String?) -> String {
        "X X X " + EDFText.subfield(name ?? "", limit: 74)
    }

    /// EDF+'s recording field: the start date, the recording as the investigation's code, no
    /// technician, the device as the equipment.
    static func recording(year: Int64, month: Int64, day: Int64, recordingID: String, deviceID: String) -> String {
        let months = ["JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"]
        let head = "Startdate \(EDFText.twoDigits(day))-\(months[Int(month) - 1])-\(year) " + EDFText.subfield(recordingID, limit: 36) + " X "
        return head + EDFText.subfield(deviceID, limit: 80 - head.utf8.count)
    }

    /// A channel's label: the signal type, then the axis for acceleration.
    static func label(_ kind: WaveformKind, channel: Int) -> String {
        switch kind {
        case .ecg: "ECG"
        case .acceleration: "Accel " + kind.channelNames[channel]
        }
    }

    static func transducer(_ kind: WaveformKind) -> String {
        switch kind {
        case .ecg: "ECG electrodes"
        case .acceleration: "Accelerometer"
        }
    }
}

/// An EDF+ file as written, and what a reader needs to know of its values.
public struct EDFPlusFile: Sendable, Hashable {
    /// The whole file.
    public let bytes: [UInt8]
    /// True when every channel maps 1:1 (physical = digital) and so every value reads back
    /// exactly; false when a channel's samples did not fit in 16 bits and were scaled.
    public let isExact: Bool
    /// True for EDF+C (one segment), false for EDF+D (gaps).
    public let isContinuous: Bool
    /// The length of a data record, in seconds.
    public let recordSeconds: Int
    /// Each ordinary signal's samples per data record.
    public let samplesPerRecord: Int
    /// The number of data records.
    public let recordCount: Int
    /// The instants that padding fills (each marked by a padding annotation).
    public let paddedInstantCount: Int
    /// The physical dimension of the ordinary signals: `uV` or `mg`.
    public let physicalDimension: String
}

/// How one channel's samples become 16-bit digital values.
struct EDFChannelScale: Sendable {
    let physicalMinimum: Int64
    let physicalMaximum: Int64
    /// Physical = digital: every sample fits in 16 bits.
    var isExact: Bool { physicalMinimum == Int64(Int16.min) && physicalMaximum == Int64(Int16.max) }

    /// The physical values that fit the header's 8 characters.
    static let physicalRange: ClosedRange<Int64> = -9_999_999...99_999_999

    init(_ strip: WaveformStrip, channel: Int) throws(WaveformFileError) {
        var lowest = Int32.max, highest = Int32.min
        for segment in strip.segments {
            for index in stride(from: channel, to: segment.samples.count, by: strip.channelCount) {
                let sample = segment.samples[index]
                lowest = min(lowest, sample)
                highest = max(highest, sample)
            }
        }
        if lowest >= Int32(Int16.min) && highest <= Int32(Int16.max) {
            physicalMinimum = Int64(Int16.min)
            physicalMaximum = Int64(Int16.max)
            return
        }
        guard Self.physicalRange.contains(Int64(lowest)) else { throw .sampleBeyondEDFRange(lowest) }
        guard Self.physicalRange.contains(Int64(highest)) else { throw .sampleBeyondEDFRange(highest) }
        physicalMinimum = Int64(lowest)
        // A channel of one value still needs a range to scale onto.
        physicalMaximum = highest > lowest ? Int64(highest) : Int64(lowest) + 1
    }

    /// The digital value of `sample`.
    func digital(_ sample: Int32) -> Int16 {
        if isExact { return Int16(truncatingIfNeeded: sample) }
        let steps = Double(Int64(sample) - physicalMinimum) * 65535 / Double(physicalMaximum - physicalMinimum)
        return Int16(clamping: Int(steps.rounded()) - 32768)
    }
}

/// Which samples go where in which data record.
struct EDFRecordLayout: Sendable {
    /// A run of one segment's instants in a record.
    struct Piece: Sendable {
        let segment: Int
        let firstInstant: Int
        let count: Int
        /// Where the run starts in the record.
        let position: Int
    }

    struct Record: Sendable {
        /// Nanoseconds from the file's start (its whole second) to the record's first sample.
        let onset: Int64
        var pieces: [Piece]
        /// The positions up to this one hold samples (or padding between pieces).
        var filled: Int
    }

    let records: [Record]
    let samplesPerRecord: Int

    init(_ strip: WaveformStrip, fileStartNanoseconds: Int64, recordSeconds: Int, samplesPerRecord: Int) {
        let recordNanoseconds = Int64(recordSeconds) * 1_000_000_000
        var records: [Record] = []
        for (index, segment) in strip.segments.enumerated() {
            let count = strip.instantCount(of: segment)
            let start = segment.startNanoseconds - fileStartNanoseconds
            var done = 0
            var continuing = false
            if var last = records.last, start < last.onset + recordNanoseconds {
                // A gap shorter than the rest of the previous record: go on in that record.
                continuing = true
                let nearest = Int((Double(start - last.onset) * strip.frequency / 1e9).rounded())
                let position = max(last.filled, nearest)
                if position < samplesPerRecord {
                    done = min(count, samplesPerRecord - position)
                    last.pieces.append(Piece(segment: index, firstInstant: 0, count: done, position: position))
                    last.filled = position + done
                    records[records.count - 1] = last
                }
            }
            while done < count {
                let onset = continuing || done > 0 ? records[records.count - 1].onset + recordNanoseconds : start
                let take = min(samplesPerRecord, count - done)
                records.append(Record(onset: onset, pieces: [Piece(segment: index, firstInstant: done, count: take, position: 0)], filled: take))
                done += take
            }
        }
        self.records = records
        self.samplesPerRecord = samplesPerRecord
    }

    /// The runs of positions in `record` that hold no sample: (first position, count).
    func padding(of record: Record) -> [(position: Int, count: Int)] {
        var runs: [(Int, Int)] = []
        var next = 0
        for piece in record.pieces {
            if piece.position > next { runs.append((next, piece.position - next)) }
            next = piece.position + piece.count
        }
        if next < samplesPerRecord { runs.append((next, samplesPerRecord - next)) }
        return runs
    }

    /// The record's annotation bytes: its time-keeping TAL, then a TAL per padded run.
    func annotations(of record: Record, frequency: Double) -> [UInt8] {
        var text = "+" + EDFText.seconds(record.onset) + "\u{14}\u{14}\u{0}"
        for run in padding(of: record) {
            let onset = record.onset + (WaveformStrip.offset(ofInstant: run.position, frequency: frequency) ?? 0)
            let duration = WaveformStrip.offset(ofInstant: run.count, frequency: frequency) ?? 0
            text += "+" + EDFText.seconds(onset) + "\u{15}" + EDFText.seconds(duration) + "\u{14}" + EDFPlusWriter.paddingAnnotation + "\u{14}\u{0}"
        }
        return Array(text.utf8)
    }

    /// Puts `channel`'s digital values of `record` in `values`, padding repeating the sample before it.
    func fill(_ values: inout [Int16], from record: Record, channel: Int, of strip: WaveformStrip, scale: EDFChannelScale) {
        let channels = strip.channelCount
        var next = 0
        var last: Int16 = 0
        for piece in record.pieces {
            while next < piece.position {
                values[next] = last
                next += 1
            }
            let samples = strip.segments[piece.segment].samples
            var index = piece.firstInstant * channels + channel
            for _ in 0..<piece.count {
                last = scale.digital(samples[index])
                values[next] = last
                next += 1
                index += channels
            }
        }
        while next < samplesPerRecord {
            values[next] = last
            next += 1
        }
    }
}

/// The fixed-width header: 256 bytes, then 256 per signal, ASCII, each field space-padded.
struct EDFHeader: Sendable {
    struct Signal: Sendable {
        var label: String
        var transducer: String
        var dimension: String
        var physicalMinimum: Int64
        var physicalMaximum: Int64
        var digitalMinimum: Int64 = Int64(Int16.min)
        var digitalMaximum: Int64 = Int64(Int16.max)
        var prefiltering = ""
        var samplesPerRecord: Int

        /// EDF+'s annotation signal of `samplesPerRecord` two-byte samples.
        static func annotations(samplesPerRecord: Int) -> Signal {
            Signal(label: "EDF Annotations", transducer: "", dimension: "", physicalMinimum: -32768, physicalMaximum: 32767,
                   samplesPerRecord: samplesPerRecord)
        }
    }

    var patient: String
    var recording: String
    /// Seconds since the Unix epoch.
    var start: Int64
    var continuous: Bool
    var recordCount: Int
    var recordSeconds: Int
    var signals: [Signal]

    var bytes: [UInt8] {
        let days = floorDivide(start, 86_400)
        let (year, month, day) = RFC3339.civilDate(fromDaysSinceEpoch: days)
        let second = start - days * 86_400
        var bytes: [UInt8] = []
        bytes.reserveCapacity(256 * (signals.count + 1))
        func field(_ text: String, _ width: Int) { bytes += EDFText.field(text, width: width) }
        field("0", 8)
        field(patient, 80)
        field(recording, 80)
        field("\(EDFText.twoDigits(day)).\(EDFText.twoDigits(month)).\(EDFText.twoDigits(year % 100))", 8)
        field("\(EDFText.twoDigits(second / 3600)).\(EDFText.twoDigits(second / 60 % 60)).\(EDFText.twoDigits(second % 60))", 8)
        field(String(256 * (signals.count + 1)), 8)
        field(continuous ? "EDF+C" : "EDF+D", 44)
        field(String(recordCount), 8)
        field(String(recordSeconds), 8)
        field(String(signals.count), 4)
        for signal in signals { field(signal.label, 16) }
        for signal in signals { field(signal.transducer, 80) }
        for signal in signals { field(signal.dimension, 8) }
        for signal in signals { field(String(signal.physicalMinimum), 8) }
        for signal in signals { field(String(signal.physicalMaximum), 8) }
        for signal in signals { field(String(signal.digitalMinimum), 8) }
        for signal in signals { field(String(signal.digitalMaximum), 8) }
        for signal in signals { field(signal.prefiltering, 80) }
        for signal in signals { field(String(signal.samplesPerRecord), 8) }
        for _ in signals { field("", 32) }
        return bytes
    }
}

/// Text as EDF holds it: printable ASCII only.
enum EDFText {
    /// `text` as a header field: cut to `width` bytes, then padded with spaces.
    static func field(_ text: String, width: Int) -> [UInt8] {
        var bytes = text.unicodeScalars.prefix(width).map { (32...126).contains($0.value) ? UInt8($0.value) : UInt8(ascii: "_") }
        bytes += repeatElement(UInt8(ascii: " "), count: width - bytes.count)
        return bytes
    }

    /// `text` as one subfield of EDF+'s patient or recording field: spaces and characters
    /// outside printable ASCII as `_`, at most `limit` characters, X when empty.
    static func subfield(_ text: String, limit: Int) -> String {
        var result = ""
        for scalar in text.unicodeScalars.prefix(max(limit, 1)) {
            result.unicodeScalars.append((33...126).contains(scalar.value) ? scalar : "_")
        }
        return result.isEmpty ? "X" : result
    }

    /// Nanoseconds as EDF+'s seconds: whole seconds, then a fraction when there is one.
    static func seconds(_ nanoseconds: Int64) -> String {
        let whole = nanoseconds / 1_000_000_000, fraction = nanoseconds % 1_000_000_000
        guard fraction != 0 else { return String(whole) }
        var digits = Array(String(fraction).utf8)
        digits.insert(contentsOf: repeatElement(UInt8(ascii: "0"), count: 9 - digits.count), at: 0)
        while digits.last == UInt8(ascii: "0") { digits.removeLast() }
        return String(whole) + "." + String(decoding: digits, as: UTF8.self)
    }

    static func twoDigits(_ value: Int64) -> String { value < 10 ? "0\(value)" : String(value) }
}
