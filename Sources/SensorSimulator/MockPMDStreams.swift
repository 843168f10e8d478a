import PMDDecoding

/// The device clock of a mock strap's PMD streams: nanoseconds since 2000-01-01T00:00:00Z,
/// starting at the wall time when the mock started, advanced by the samples' own time, so that
/// sample *n* of a stream at *r* Hz is ⌊*n* × 10⁹ / *r*⌋ ns after the start.
struct MockDeviceClock: Sendable, Hashable {
    /// Polar-epoch nanoseconds of elapsed time 0 (sample 0 of every stream).
    let start: UInt64

    /// A clock starting at `unixMicroseconds` (a wall time); at 0 for a time before 2000.
    init(startingAtUnixMicroseconds unixMicroseconds: Int64) {
        let (nanoseconds, overflow) = unixMicroseconds.multipliedReportingOverflow(by: 1000)
        start = overflow ? 0 : PMDClock.polarNanoseconds(unixNanoseconds: nanoseconds) ?? 0
    }

    /// The device time of sample `index` (≥ 0) of a stream at `sampleRate` (> 0) Hz.
    func timestamp(ofSample index: Int, sampleRate: Int) -> UInt64 {
        let product = UInt64(index).multipliedFullWidth(by: 1_000_000_000)
        let (offset, _) = UInt64(sampleRate).dividingFullWidth(product)
        return start &+ offset
    }
}

/// Collects one stream's samples into frames of a fixed size and says which sample each frame
/// ends with, so that its timestamp is that sample's device time. Samples stay pending until a
/// frame is full: frames never overlap and never leave a hole.
struct MockFrameBatcher<Sample: Sendable>: Sendable {
    /// Samples in a full frame.
    let samplesPerFrame: Int
    /// Index (in the stream) of the first pending sample.
    private(set) var firstPendingIndex = 0
    private var pending: [Sample] = []

    init(samplesPerFrame: Int) {
        self.samplesPerFrame = max(1, samplesPerFrame)
    }

    /// Takes in the stream's next samples; returns the frames they complete, oldest first, each
    /// with the stream index of its last sample.
    mutating func append(_ samples: [Sample]) -> [(samples: [Sample], lastIndex: Int)] {
        pending += samples
        var frames: [(samples: [Sample], lastIndex: Int)] = []
        while pending.count >= samplesPerFrame {
            let frame = Array(pending.prefix(samplesPerFrame))
            pending.removeFirst(samplesPerFrame)
            firstPendingIndex += samplesPerFrame
            frames.append((frame, firstPendingIndex - 1))
        }
        return frames
    }
}

/// A mock strap's PMD streams, as a Polar H10 sends them at ATT MTU 232: ECG at 130 Hz in raw
/// frames of 73 int24 µV samples (frame type 0), acceleration at 50 Hz, ±8 G, 16 bit, in raw
/// frames of 36 int16 x y z mG samples (frame type 1). Each frame is stamped with the device
/// time of its last sample (see `MockDeviceClock`), and sent once full.
///
/// The ECG is rendered from the beats the strap detects, so while contact is lost it holds no
/// complexes: only the baseline wander and the noise, with no gap in its samples or timestamps.
/// Its samples become final as `ECGSynthesizer` describes (about a quarter second behind the
/// tick); acceleration samples are final at once.
struct MockPMDStreams: Sendable {
    /// The ATT MTU the frames are sized for.
    static let mtu = 232
    /// What a client writes to start the ECG: 130 Hz, 14 bit.
    static let ecgSettings = PMDSettings(sampleRate: 130, resolution: 14)
    /// What a client writes to start acceleration: 50 Hz, 16 bit, ±8 G.
    static let accelerationSettings = PMDSettings(sampleRate: 50, resolution: 16, range: 8)

    private let clock: MockDeviceClock
    private var ecg: ECGSynthesizer?
    private var ecgFrames = MockFrameBatcher<Int32>(samplesPerFrame: PMDFrameEncoder.rawSamplesPerFrame(of: .ecg, mtu: mtu))
    private var acceleration: AccelerationSynthesizer?
    private var accelerationFrames = MockFrameBatcher<PMDAccSample>(
        samplesPerFrame: PMDFrameEncoder.rawSamplesPerFrame(of: .acc, mtu: mtu))

    /// The streams a mock with `ecg` and `acceleration` runs, seeded from `seed` (the ECG from
    /// `seed`, acceleration from `seed` + 1), on a device clock started at `clock`.
    init(ecg: Bool, acceleration: Bool, seed: UInt64, clock: MockDeviceClock) {
        self.clock = clock
        if ecg {
            self.ecg = ECGSynthesizer(settings: .init(sampleRate: Double(Self.ecgSettings.sampleRate ?? 130), seed: seed))
        }
        if acceleration {
            self.acceleration = AccelerationSynthesizer(
                settings: .init(
                    sampleRate: Double(Self.accelerationSettings.sampleRate ?? 50), seed: seed &+ 1,
                    rangeG: Double(Self.accelerationSettings.range ?? 8)))
        }
    }

    /// Whether any stream runs.
    var isStreaming: Bool { ecg != nil || acceleration != nil }

    /// For each running stream, the start request a client writes to the control point and
    /// the device's indication answering it (success).
    var startExchanges: [(request: [UInt8], response: [UInt8])] {
        var exchanges: [(request: [UInt8], response: [UInt8])] = []
        if ecg != nil { exchanges.append(Self.startExchange(.ecg, Self.ecgSettings)) }
        if acceleration != nil { exchanges.append(Self.startExchange(.acc, Self.accelerationSettings)) }
        return exchanges
    }

    /// The data frames (PMD data notifications) that become due at `elapsed` seconds since
    /// start: `beats` are the R peaks the strap detected since the previous call (every beat
    /// at or before `elapsed`), `effort` the wearer's effort at a time. ECG frames first, then
    /// acceleration, each stream in order.
    mutating func frames(at elapsed: Double, beats: [Double], effort: (Double) -> Double) -> [[UInt8]] {
        var out: [[UInt8]] = []
        if ecg != nil {
            for beat in beats {
                // The simulator's beats come in order and at least the shortest RR apart; one
                // that did not would only be left out of the trace.
                try? ecg?.addBeat(at: beat)
            }
            ecg?.markBeatsKnown(through: elapsed)
            let rate = Int(ecg?.settings.sampleRate ?? 130)
            for frame in ecgFrames.append(ecg?.renderFinalSamples() ?? []) {
                let timestamp = clock.timestamp(ofSample: frame.lastIndex, sampleRate: rate)
                // Rendered samples lie within int24 and a frame is never empty.
                if let bytes = try? PMDFrameEncoder.ecgFrame(frame.samples, timestamp: timestamp) { out.append(bytes) }
            }
        }
        if acceleration != nil {
            let rate = Int(acceleration?.settings.sampleRate ?? 50)
            let samples = acceleration?.render(through: elapsed, effort: effort) ?? []
            for frame in accelerationFrames.append(samples) {
                let timestamp = clock.timestamp(ofSample: frame.lastIndex, sampleRate: rate)
                // Rendered samples lie within ±8 G and a frame is never empty.
                if let bytes = try? PMDFrameEncoder.accelerationFrame(frame.samples, timestamp: timestamp) { out.append(bytes) }
            }
        }
        return out
    }

    private static func startExchange(_ type: PMDMeasurementType, _ settings: PMDSettings) -> (request: [UInt8], response: [UInt8]) {
        let request = PMDControlPointRequest.start(type, settings)
        let response = PMDControlPointResponse(opCode: request.opCode, measurementType: type)
        return (request.bytes, response.bytes)
    }
}
