import HealthModel
import HealthStore
import Logging
import SensorFrames
import Timestamps

/// Turns straps' PMD streams into waveform recordings in the store: one recording per strap
/// and stream from the stream's first samples to its stop (a stop request, a refused start,
/// the link's end), with the gaps of lost frames inside it. Samples wait for the next flush
/// and are written as parts of their recording; a part the store refuses for want of share
/// authorization is dropped and counted, one that fails for the store's sake is kept and
/// retried, up to ``maxPendingInstants`` a recording.
struct WaveformRecorder {
    /// Instants one recording keeps for retry while the store cannot be written (about 25
    /// minutes of ECG at 130 Hz); beyond it the oldest go, counted as lost.
    static let maxPendingInstants = 200_000

    private struct Key: Hashable {
        var device: SensorID
        var type: SampleType
    }

    /// A recording being made: as the store will know it, and its samples not yet written.
    private struct Open {
        var recording: WaveformRecording
        var pending: [WaveformSegment] = []
        var ended = false
        var pendingInstants: Int { pending.reduce(0) { $0 + $1.instantCount(channels: recording.channels.count) } }
    }

    let source: String
    private let logger: Logger
    private var streams: [SensorID: PMDStreams] = [:]
    private var open: [Key: Open] = [:]
    /// Recordings ended whose last part is not written yet.
    private var ending: [Open] = []
    private var refusedTypes: Set<SampleType> = []
    /// The straps' motion, from their acceleration, for their heart-rate samples.
    private var motion = MotionTracker()
    private var failing = false
    private(set) var counters = WaveformCounters()

    init(source: String, logger: Logger) {
        self.source = source
        self.logger = logger
    }

    /// Whether `frame` is one this recorder follows: the PMD characteristics, and a strap's
    /// connection and disconnection (they end its streams).
    static func follows(_ frame: SensorFrame) -> Bool {
        switch frame.kind {
        case .connected, .disconnected: true
        default: frame.characteristic == .pmdData || frame.characteristic == .pmdControlPoint
        }
    }

    /// Takes one frame; returns why part of it was skipped.
    mutating func take(_ frame: SensorFrame) -> [SkipReason] {
        var tracker = streams[frame.device] ?? PMDStreams()
        let (outputs, skips) = tracker.take(frame)
        streams[frame.device] = tracker
        for output in outputs {
            switch output {
            case .samples(let type, let segment, let continues, let frequency):
                add(segment, continues: continues, of: type, frequency: frequency, device: frame.device)
                if type == .acceleration { motion.add(segment, frequency: frequency, of: frame.device) }
            case .stopped(let type):
                end(Key(device: frame.device, type: type))
                if type == .acceleration { motion.forget(frame.device) }
            }
        }
        return skips
    }

    /// Gives the heart-rate samples among `samples` the motion context of their strap's
    /// acceleration (``MotionTracker``), where it streams any.
    func tagMotion(_ samples: inout ArraySlice<QuantitySample>) {
        for index in samples.indices where samples[index].type == .heartRate {
            guard let device = samples[index].device?.localIdentifier,
                let context = motion.context(of: SensorID(device), at: samples[index].start)
            else { continue }
            samples[index].metadata.extra[MotionContext.metadataKey] = context.rawValue
        }
    }

    private mutating func add(_ segment: WaveformSegment, continues: Bool, of type: SampleType, frequency: Double, device: SensorID) {
        let key = Key(device: device, type: type)
        if let current = open[key], current.recording.frequency != frequency { end(key) }
        var entry = open[key] ?? Open(recording: WaveformRecording(
            id: EventRecorder.id(type: type, device: device.rawValue, start: segment.start), type: type, source: source,
            device: device.rawValue, frequency: frequency, start: segment.start, end: segment.start, instantCount: 0, isOpen: true))
        let channels = type.channels.count
        if continues, let last = entry.pending.last, last.isContinued(by: segment, frequency: frequency, channels: channels) {
            entry.pending[entry.pending.count - 1].values.append(contentsOf: segment.values)
        } else {
            entry.pending.append(segment)
        }
        open[key] = entry
    }

    private mutating func end(_ key: Key) {
        guard var entry = open.removeValue(forKey: key) else { return }
        entry.ended = true
        entry.recording.isOpen = false
        ending.append(entry)
    }

    /// Writes what waits: every open recording's new samples, and the ended recordings' last parts.
    mutating func flush(to store: HealthStore) {
        var kept: [Open] = []
        for var entry in ending where !write(&entry, to: store) { kept.append(entry) }
        ending = kept
        for key in open.keys.sorted(by: { ($0.device, $0.type.storageID) < ($1.device, $1.type.storageID) }) {
            guard var entry = open[key], !entry.pending.isEmpty else { continue }
            _ = write(&entry, to: store)
            open[key] = entry
        }
    }

    /// Ends every recording (hrmd stops, a replay ends) and writes them.
    mutating func finish(in store: HealthStore) {
        for key in Array(open.keys) { end(key) }
        for _ in 0..<3 where !ending.isEmpty { flush(to: store) }
        let lost = ending.reduce(0) { $0 + $1.pendingInstants }
        if lost > 0 {
            counters.lost += lost
            logger.error("could not write \(lost) waveform samples before stopping")
        }
        ending.removeAll()
    }

    /// Writes one recording's waiting samples; true when they are done with (written, or
    /// refused and dropped), false when the store failed and they wait for the next flush.
    private mutating func write(_ entry: inout Open, to store: HealthStore) -> Bool {
        let part = WaveformPart(recording: entry.recording, segments: entry.pending)
        do {
            let report = try store.saveWaveform(part)
            counters.stored += report.stored
            counters.unchanged += report.unchanged
            entry.recording = report.recording
            entry.recording.isOpen = !entry.ended
            entry.pending.removeAll(keepingCapacity: true)
            if failing {
                failing = false
                logger.notice("waveforms are written again")
            }
            if refusedTypes.remove(entry.recording.type) != nil {
                logger.notice("\(source) may share \(entry.recording.type.identifier) now: recording it")
            }
            return true
        } catch .shareNotAuthorized {
            counters.denied += entry.pendingInstants
            if refusedTypes.insert(entry.recording.type).inserted {
                logger.warning(
                    "\(source) may not share \(entry.recording.type.identifier): its samples are not stored (hrmctl auth grant \(source) \(entry.recording.type.identifier))")
            }
            entry.pending.removeAll(keepingCapacity: true)
            return true
        } catch .conflict(let reason) {
            counters.lost += entry.pendingInstants
            logger.error("a \(entry.recording.type.identifier) recording of \(entry.recording.device ?? "a strap") was refused: \(reason)")
            entry.pending.removeAll(keepingCapacity: true)
            return true
        } catch {
            if !failing {
                failing = true
                logger.error("cannot write waveforms to the store (samples are kept and retried): \(error)")
            }
            let channels = entry.recording.channels.count
            var waiting = entry.pendingInstants
            while waiting > Self.maxPendingInstants, let oldest = entry.pending.first {
                waiting -= oldest.instantCount(channels: channels)
                counters.lost += oldest.instantCount(channels: channels)
                entry.pending.removeFirst()
            }
            return false
        }
    }
}

/// What a waveform recorder did, in instants (one value per channel each).
public struct WaveformCounters: Sendable, Equatable {
    public var stored = 0
    /// Instants the recording held already (a replay of what was stored).
    public var unchanged = 0
    /// Instants not stored for want of share authorization.
    public var denied = 0
    /// Instants given up: refused as malformed, or waiting too long for a failing store.
    public var lost = 0
    public init() {}
}
