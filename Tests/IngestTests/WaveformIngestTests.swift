import Foundation
import GRDB
import HealthModel
import HealthStore
import Logging
import PMDDecoding
import SensorFrames
import TestSupport
import Testing
import Timestamps

@testable import Ingest

@Suite("PMD streams through ingest: ECG and acceleration frames become waveform recordings, hostile frames counted skips")
struct WaveformIngestTests {
    let store: HealthStore
    static let strap = SensorID("AA:BB:CC:DD:EE:10")
    /// The wall time the strap's stream starts at, µs.
    static let origin: Int64 = 1_795_168_800_000_000
    static let period = 1e9 / 130

    init() throws {
        store = try HealthStore(writer: DatabaseQueue())
        for type in [SampleType.heartRate, .electrocardiogram, .acceleration] {
            try store.setShareAuthorization(.sharingAuthorized, source: "hrmd", type: type)
        }
    }

    func ingestor() -> FrameIngestor {
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        return FrameIngestor(store: store, settings: IngestSettings(source: HealthSource(name: "hrmd"), alerts: nil), logger: logger)
    }

    static func time(_ micros: Int64) -> Timestamp { Timestamp(microsecondsSinceEpoch: micros) }

    static func start(_ measurement: PMDMeasurementType, _ settings: PMDSettings, at micros: Int64 = origin) -> SensorFrame {
        SensorFrame(
            time: time(micros), transport: .ble, device: strap, kind: .write, characteristic: .pmdControlPoint,
            value: PMDControlPointRequest.start(measurement, settings).bytes)
    }

    /// The sample values of ECG instant `index`: different for every instant, negative too.
    static func microvolts(_ index: Int) -> Int32 { Int32((index * 7919) % 4001 - 2000) }

    /// An ECG raw frame of `count` instants from instant `first`, stamped by a strap clock that
    /// runs `rate` times as fast as the wall, arriving 30 ms after its last sample.
    static func ecgFrame(first: Int, count: Int = 73, rate: Double = 1, arrivalDelay: Int64 = 30_000) -> SensorFrame {
        let lastInstant = first + count - 1
        let deviceNanos = origin * 1000 + Int64(Double(lastInstant) * period / rate)
        let timestamp = PMDClock.polarNanoseconds(unixNanoseconds: deviceNanos) ?? 0
        var bytes: [UInt8] = [0x00]
        bytes += withUnsafeBytes(of: timestamp.littleEndian, Array.init)
        bytes.append(0x00)
        for index in first...lastInstant {
            let value = UInt32(bitPattern: microvolts(index))
            bytes += [UInt8(value & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value >> 16 & 0xFF)]
        }
        return SensorFrame(
            time: time(origin + Int64(Double(lastInstant) * period / 1000) + arrivalDelay), transport: .ble, device: strap, kind: .notify,
            characteristic: .pmdData, value: bytes)
    }

    func recordings() throws -> [WaveformRecording] { try store.waveforms(WaveformQuery()) }

    func samples(_ id: String) throws -> [WaveformSegment] {
        var segments: [WaveformSegment] = []
        try store.readWaveform(id) { recording, piece in
            segments.append(joining: piece, frequency: recording.frequency, channels: recording.channels.count)
            return true
        }
        return segments
    }

    @Test("ECG frames store exactly the µV the strap sent, timed from the strap's clock")
    func storedAsSent() throws {
        var ingest = ingestor()
        ingest.accept(Self.start(.ecg, .h10ECG))
        for frame in 0..<20 { #expect(ingest.accept(Self.ecgFrame(first: frame * 73)) == 0) }
        ingest.flush()
        let recording = try #require(try recordings().first)
        #expect(recording.type == .electrocardiogram && recording.frequency == 130 && recording.device == Self.strap.rawValue)
        #expect(recording.instantCount == 1460 && recording.isOpen)
        // The strap's clock is taken to run the smallest arrival delay seen (30 ms) behind the wall.
        #expect(abs(recording.start.microsecondsSinceEpoch - (Self.origin + 30_000)) <= 1)
        let segments = try samples(recording.id)
        #expect(segments.count == 1)
        #expect(segments.first?.values == (0..<1460).map(Self.microvolts))
        ingest.finish()
        #expect(try recordings().first?.isOpen == false)
        #expect(ingest.waveformCounters.stored == 1460)
    }

    @Test("frames of a stream never started, and lengths that lie, are counted skips that store nothing")
    func notStartedAndLying() throws {
        var ingest = ingestor()
        #expect(ingest.skips(accepting: Self.ecgFrame(first: 0)) == [.pmdNotStarted])
        ingest.accept(Self.start(.ecg, .h10ECG))
        var lying = Self.ecgFrame(first: 0)
        lying.value.removeLast()
        #expect(ingest.skips(accepting: lying).map(\.category) == ["malformed frame"])
        var accFrame = Self.ecgFrame(first: 0)
        accFrame.value[0] = PMDMeasurementType.acc.rawValue
        #expect(ingest.skips(accepting: accFrame) == [.pmdNotStarted], "an ACC frame while only ECG was started")
        ingest.flush()
        #expect(try recordings().isEmpty)
    }

    @Test("a timestamp that jumps backwards is skipped; the stream goes on after it")
    func backwards() throws {
        var ingest = ingestor()
        ingest.accept(Self.start(.ecg, .h10ECG))
        ingest.accept(Self.ecgFrame(first: 0))
        ingest.accept(Self.ecgFrame(first: 73))
        #expect(ingest.skips(accepting: Self.ecgFrame(first: 0)).map(\.category) == ["PMD frame with an impossible timestamp"])
        ingest.accept(Self.ecgFrame(first: 146))
        ingest.flush()
        let recording = try #require(try recordings().first)
        #expect(try samples(recording.id).map(\.values) == [(0..<219).map(Self.microvolts)])
    }

    @Test("frames lost on the way leave a gap between two segments of one recording")
    func gap() throws {
        var ingest = ingestor()
        ingest.accept(Self.start(.ecg, .h10ECG))
        for frame in [0, 1, 2, 5, 6] { ingest.accept(Self.ecgFrame(first: frame * 73)) }
        ingest.flush()
        let recording = try #require(try recordings().first)
        let segments = try samples(recording.id)
        #expect(segments.map(\.values) == [(0..<219).map(Self.microvolts), (365..<511).map(Self.microvolts)])
        #expect(recording.instantCount == 365)
    }

    @Test("a strap clock 0.3 % fast over ten minutes: every sample kept, each within half a period of the strap's time")
    func drift() throws {
        var ingest = ingestor()
        ingest.accept(Self.start(.ecg, .h10ECG))
        let frames = 1070  // about ten minutes
        for frame in 0..<frames { ingest.accept(Self.ecgFrame(first: frame * 73, rate: 1.003)) }
        ingest.flush()
        let recording = try #require(try recordings().first)
        #expect(recording.instantCount == frames * 73)
        let segments = try samples(recording.id)
        #expect(segments.flatMap(\.values) == (0..<(frames * 73)).map(Self.microvolts))
        // The last instant where the strap's clock says it is.
        let last = try #require(segments.last)
        let lastIndex = last.instantCount(channels: 1) - 1
        // The strap's time of it, mapped by the smallest arrival delay: the first frame's.
        let offset = 30_000 + 72 * Self.period / 1000 * (1 - 1 / 1.003)
        let strapTime = Double(Self.origin) + Double(frames * 73 - 1) * Self.period / 1000 / 1.003 + offset
        #expect(abs(Double(last.time(ofInstant: lastIndex, frequency: 130).microsecondsSinceEpoch) - strapTime) <= Self.period / 2000 + 1)
    }

    @Test("10,000 frames in a second: the strap's clock runs ahead of the arrivals, the flood is skipped, nothing wrong stored")
    func flood() throws {
        var ingest = ingestor()
        ingest.accept(Self.start(.ecg, .h10ECG))
        var skipped = 0
        for frame in 0..<10_000 {
            var flooding = Self.ecgFrame(first: frame * 73)
            flooding.time = Self.time(Self.origin + Int64(frame) * 100)
            skipped += ingest.accept(flooding)
        }
        ingest.flush()
        let stored = try recordings().first?.instantCount ?? 0
        // At most what 2 s of clock lead allows (plus the frame that crossed it).
        #expect(stored <= 2 * 130 + 73 + 73)
        #expect(skipped >= 10_000 - (stored / 73))
        if let recording = try recordings().first {
            #expect(try samples(recording.id).flatMap(\.values) == (0..<stored).map(Self.microvolts))
        }
    }

    @Test("without share authorization no ECG is stored; a disconnection ends a recording and a new start makes another")
    func authorizationAndReconnect() throws {
        try store.setShareAuthorization(.sharingDenied, source: "hrmd", type: .electrocardiogram)
        var ingest = ingestor()
        ingest.accept(Self.start(.ecg, .h10ECG))
        ingest.accept(Self.ecgFrame(first: 0))
        ingest.flush()
        #expect(try recordings().isEmpty)
        #expect(ingest.waveformCounters.denied == 73)
        try store.setShareAuthorization(.sharingAuthorized, source: "hrmd", type: .electrocardiogram)
        ingest.accept(Self.ecgFrame(first: 73))
        ingest.accept(SensorFrame(time: Self.time(Self.origin + 2_000_000), transport: .ble, device: Self.strap, kind: .disconnected))
        ingest.flush()
        #expect(try recordings().map(\.isOpen) == [false])
        ingest.accept(SensorFrame(time: Self.time(Self.origin + 5_000_000), transport: .ble, device: Self.strap, kind: .connected))
        #expect(ingest.skips(accepting: Self.ecgFrame(first: 730)) == [.pmdNotStarted], "a new link starts its streams anew")
        ingest.accept(Self.start(.ecg, .h10ECG, at: Self.origin + 5_000_000))
        ingest.accept(Self.ecgFrame(first: 803))
        ingest.flush()
        #expect(try recordings().count == 2)
    }

    /// A raw 16-bit ACC frame of 36 instants from instant `first` at 50 Hz: gravity on z, and a
    /// swing of `swing` mG on x at 2.5 Hz (steps), arriving 30 ms after its last sample.
    static func accFrame(first: Int, swing: Double) -> SensorFrame {
        let lastInstant = first + 35
        let timestamp = PMDClock.polarNanoseconds(unixNanoseconds: origin * 1000 + Int64(lastInstant) * 20_000_000) ?? 0
        var bytes: [UInt8] = [PMDMeasurementType.acc.rawValue]
        bytes += withUnsafeBytes(of: timestamp.littleEndian, Array.init)
        bytes.append(0x01)
        for instant in first...lastInstant {
            let x = Int16(swing * sin(2 * Double.pi * 2.5 * Double(instant) / 50))
            for value in [x, Int16(instant % 3), 1000] { bytes += withUnsafeBytes(of: value.littleEndian, Array.init) }
        }
        return SensorFrame(
            time: time(origin + Int64(lastInstant) * 20_000 + 30_000), transport: .ble, device: strap, kind: .notify,
            characteristic: .pmdData, value: bytes)
    }

    static func heartRate(at seconds: Int64) -> SensorFrame {
        SensorFrame(
            time: time(origin + seconds * 1_000_000), transport: .ble, device: strap, kind: .notify, characteristic: .heartRateMeasurement,
            value: [0x00, 90])
    }

    @Test("heart rate gets the motion context of the strap's own acceleration: still, sedentary; stepping, active; too little, none")
    func motionContext() throws {
        var ingest = ingestor()
        ingest.accept(Self.start(.acc, PMDSettings(sampleRate: 50, resolution: 16, range: 8)))
        var frames: [SensorFrame] = []
        // 20 s of standing still, then 20 s of steps swinging 300 mG; heart rate every second.
        for frame in 0..<56 { frames.append(Self.accFrame(first: frame * 36, swing: frame * 36 < 1000 ? 0 : 300)) }
        frames += (1...40).map { Self.heartRate(at: Int64($0)) }
        for frame in frames.sorted(by: { $0.time < $1.time }) { ingest.accept(frame) }
        ingest.flush()
        let samples = try store.samples(SampleQuery(type: .heartRate))
        func context(at second: Int64) -> String? {
            samples.first { $0.sample.start == Self.time(Self.origin + second * 1_000_000) }?.sample.metadata.extra[MotionContext.metadataKey]
        }
        #expect(samples.count == 40)
        #expect(context(at: 3) == nil, "less than 5 s of acceleration before it")
        #expect(context(at: 15) == "sedentary")
        #expect(context(at: 38) == "active")
        #expect(samples.filter { $0.sample.metadata.extra[MotionContext.metadataKey] != nil }.count >= 30)
    }

    @Test("acceleration: three axes interleaved, in the resolution its start announced")
    func acceleration() throws {
        var ingest = ingestor()
        ingest.accept(Self.start(.acc, PMDSettings(sampleRate: 50, resolution: 16, range: 8)))
        var bytes: [UInt8] = [PMDMeasurementType.acc.rawValue]
        let timestamp = PMDClock.polarNanoseconds(unixNanoseconds: Self.origin * 1000 + 40_000_000) ?? 0
        bytes += withUnsafeBytes(of: timestamp.littleEndian, Array.init)
        bytes.append(0x01)
        let axes: [Int16] = [10, -20, 1000, 11, -21, 999, 12, -22, 998]
        for value in axes { bytes += withUnsafeBytes(of: value.littleEndian, Array.init) }
        ingest.accept(SensorFrame(
            time: Self.time(Self.origin + 60_000), transport: .ble, device: Self.strap, kind: .notify, characteristic: .pmdData, value: bytes))
        var narrow = bytes
        narrow[9] = 0x00  // 8-bit samples: not what the start announced
        #expect(ingest.skips(accepting: SensorFrame(
            time: Self.time(Self.origin + 90_000), transport: .ble, device: Self.strap, kind: .notify, characteristic: .pmdData,
            value: narrow)) == [.pmdNotStarted])
        ingest.flush()
        let recording = try #require(try recordings().first)
        #expect(recording.type == .acceleration && recording.frequency == 50)
        #expect(try samples(recording.id).flatMap(\.values) == axes.map(Int32.init))
    }
}
