import HealthModel
import PMDDecoding
import SensorFrames
import Timestamps

/// What one frame of a strap's PMD streams gave: samples for a waveform type, a stream's end,
/// or nothing.
enum PMDStreamOutput: Equatable {
    /// Samples of `type`: a new segment when `continues` is false (the stream started, or
    /// came back after a gap).
    case samples(type: SampleType, segment: WaveformSegment, continues: Bool, frequency: Double)
    /// The stream of `type` stopped (asked to, or the strap disconnected).
    case stopped(SampleType)
}

/// Follows the PMD streams of one strap through its frames: learns each stream's settings from
/// the start request written to the control point (a `write` frame of `5c81`) and the
/// strap's answer (its `notify`), decodes the data frames (`notify` of `5c82`) and times
/// their samples in wall time. Pure: no I/O, no clock but the frames'.
///
/// **Timing.** A frame's timestamp is the strap's clock (ns since 2000) at its last sample.
/// `PMDHostTimeMapper` maps it to wall time by the smallest arrival delay seen. A frame
/// continues its stream's segment when its timestamp advanced by its samples at a rate within
/// ±25 % of the stream's nominal rate; otherwise frames were lost and a new segment starts (a
/// gap). Inside a segment samples are placed at the nominal rate from the segment's start;
/// when the strap's clock has drifted more than half a sample period from that, the segment
/// is cut and the next starts at the strap's own time, so times never drift further than
/// half a sample period from the strap's clock, and no sample is dropped to fit.
///
/// **Refused frames**, each a counted skip and never a sample: a data frame of a measurement
/// not started (or another type than announced), one that does not decode (a length that
/// lies), a timestamp that does not advance (backwards, repeated, or faster than ±25 % of the
/// rate allows), and one ahead of the arrivals: a strap whose clock runs more than two
/// seconds ahead of the time that passed since its stream started (a flood of frames).
struct PMDStreams {
    /// What one started stream knows.
    struct Stream {
        var type: SampleType
        var measurement: PMDMeasurementType
        var settings: PMDSettings
        /// The ACC conversion factor of the strap's start answer.
        var factor: Float = 1
        var mapper = PMDHostTimeMapper()
        /// The previous frame's timestamp (strap clock, Polar ns).
        var lastTimestamp: UInt64?
        /// The first frame's timestamp and arrival (Unix ns), to spot a clock running ahead.
        var firstFrame: (timestamp: UInt64, arrival: Int64)?
        /// The open segment's first sample (strap clock) and its instants so far.
        var segmentStart: UInt64?
        var segmentInstants = 0
        /// The open segment's first sample in wall time.
        var segmentWallStart: Timestamp?

        var nominalRate: Double { Double(settings.sampleRate ?? Self.defaultRate(of: measurement)) }

        static func defaultRate(of measurement: PMDMeasurementType) -> UInt16 {
            measurement == .ecg ? 130 : 50
        }
    }

    /// How far a strap's clock may run ahead of the wall time that passed, ns.
    static let aheadLimit: Int64 = 2_000_000_000

    private(set) var streams: [PMDMeasurementType: Stream] = [:]

    /// The waveform type a PMD measurement is stored as.
    static func waveformType(of measurement: PMDMeasurementType) -> SampleType? {
        switch measurement {
        case .ecg: .electrocardiogram
        case .acc: .acceleration
        default: nil
        }
    }

    /// Takes one frame of the strap; returns what it gave, and why part of it was skipped.
    mutating func take(_ frame: SensorFrame) -> (outputs: [PMDStreamOutput], skips: [SkipReason]) {
        switch (frame.kind, frame.characteristic) {
        case (.write, .pmdControlPoint?):
            return (startOrStop(frame.value), [])
        case (.notify, .pmdControlPoint?):
            answer(frame.value)
            return ([], [])
        case (.notify, .pmdData?):
            return data(frame)
        case (.disconnected, _), (.connected, _):
            // A new connection starts its streams anew.
            let stopped = streams.values.map { PMDStreamOutput.stopped($0.type) }
            streams.removeAll()
            return (stopped, [])
        default:
            return ([], [])
        }
    }

    private mutating func startOrStop(_ bytes: [UInt8]) -> [PMDStreamOutput] {
        guard let request = try? PMDControlPointRequest(bytes: bytes) else { return [] }
        switch request {
        case .start(let measurement, let settings):
            guard let type = Self.waveformType(of: measurement) else { return [] }
            let previous = streams[measurement]
            streams[measurement] = Stream(type: type, measurement: measurement, settings: settings)
            return previous.map { [.stopped($0.type)] } ?? []
        case .stop(let measurement):
            guard let stream = streams.removeValue(forKey: measurement) else { return [] }
            return [.stopped(stream.type)]
        case .getSettings:
            return []
        }
    }

    /// A start answer carries the ACC factor; a refused start ends the stream it announced.
    private mutating func answer(_ bytes: [UInt8]) {
        guard let response = try? PMDControlPointResponse(bytes: bytes), response.opCode == .requestMeasurementStart,
            let measurement = response.measurementType, streams[measurement] != nil
        else { return }
        if response.error != nil {
            streams[measurement] = nil
            return
        }
        if let factor = try? response.availableSettings().factors.first, factor.isFinite, factor > 0 {
            streams[measurement]?.factor = factor
        }
    }

    private mutating func data(_ frame: SensorFrame) -> (outputs: [PMDStreamOutput], skips: [SkipReason]) {
        guard let header = try? PMDFrameHeader(bytes: frame.value) else {
            return ([], [.malformed("a PMD frame shorter than its header")])
        }
        guard let measurement = header.measurementType, var stream = streams[measurement] else {
            return ([], [.pmdNotStarted])
        }
        let decoded: PMDDataFrame
        do {
            decoded = try PMDDataFrame(bytes: frame.value, factor: stream.factor)
        } catch {
            return ([], [.malformed("PMD: \(error)")])
        }
        guard Self.fits(header, stream.settings) else { return ([], [.pmdNotStarted]) }
        let values: [Int32]
        switch decoded.samples {
        case .ecg(let microvolts): values = microvolts
        case .acc(let triples): values = triples.flatMap { [$0.x, $0.y, $0.z] }
        case .ppi: return ([], [])
        }
        let count = decoded.samples.count
        guard count > 0 else { return ([], []) }
        let arrival = frame.time.microsecondsSinceEpoch * 1000
        let timestamp = header.timestamp
        let period = 1e9 / stream.nominalRate
        // The clock must not run ahead of the time that passed since the stream's first frame.
        if let first = stream.firstFrame {
            let strapElapsed = timestamp > first.timestamp ? Int64(clamping: timestamp - first.timestamp) : 0
            if strapElapsed - (arrival - first.arrival) > Self.aheadLimit { return ([], [.pmdTimestamp("ahead of its arrival")]) }
        }
        var continues = false
        var firstSample: UInt64
        if let last = stream.lastTimestamp {
            guard timestamp > last else { return ([], [.pmdTimestamp("not after the previous frame's")]) }
            let interval = Double(timestamp - last) / Double(count)
            if interval < 0.75 * period { return ([], [.pmdTimestamp("closer than its samples allow")]) }
            if interval <= 1.25 * period {
                firstSample = last &+ UInt64(interval.rounded())
                continues = true
            } else {
                firstSample = Self.firstSample(of: timestamp, count: count, period: period)
            }
        } else {
            firstSample = Self.firstSample(of: timestamp, count: count, period: period)
        }
        stream.mapper.observe(deviceTimestamp: timestamp, hostReceiveTime: arrival)
        if stream.firstFrame == nil { stream.firstFrame = (timestamp, arrival) }
        stream.lastTimestamp = timestamp
        // Inside a segment, samples sit at the nominal rate: cut it when the strap's clock
        // has drifted half a period away from that.
        if continues, let start = stream.segmentStart {
            let expected = Double(start) + Double(stream.segmentInstants) * period
            if abs(Double(firstSample) - expected) > period / 2 { continues = false }
        }
        let wallStart: Timestamp
        if continues, let segmentWallStart = stream.segmentWallStart {
            wallStart = Timestamp(
                microsecondsSinceEpoch: segmentWallStart.microsecondsSinceEpoch
                    + Int64((Double(stream.segmentInstants) * period / 1000).rounded()))
        } else {
            guard let mapped = stream.mapper.hostTime(deviceTimestamp: firstSample) else {
                return ([], [.pmdTimestamp("outside the clock's range")])
            }
            wallStart = Timestamp(microsecondsSinceEpoch: mapped / 1000)
            stream.segmentStart = firstSample
            stream.segmentWallStart = wallStart
            stream.segmentInstants = 0
        }
        stream.segmentInstants += count
        streams[measurement] = stream
        return ([.samples(type: stream.type, segment: WaveformSegment(start: wallStart, values: values), continues: continues,
                          frequency: stream.nominalRate)], [])
    }

    private static func firstSample(of timestamp: UInt64, count: Int, period: Double) -> UInt64 {
        let span = UInt64((Double(count - 1) * period).rounded())
        return timestamp > span ? timestamp - span : 0
    }

    /// Whether a frame's type is one its stream's settings announce: ECG raw or delta frames;
    /// ACC raw frames of the announced resolution's width, or delta frames.
    private static func fits(_ header: PMDFrameHeader, _ settings: PMDSettings) -> Bool {
        guard header.measurementType == .acc, !header.isCompressed, let resolution = settings.resolution else { return true }
        return Int(header.frameType) + 1 == (Int(resolution) + 7) / 8
    }
}
