import HealthModel
import HealthStore
import HeartRateEvents
import SensorFrames

/// How frames become stored samples: who writes, how batches are cut, which locations win.
public struct IngestSettings: Sendable {
    /// The source that writes, and whose authorization applies.
    public var source: HealthSource
    /// Longest time a sample waits before it is written (the live pipeline's flush tick).
    public var flushInterval: Duration
    /// A batch is written as soon as it holds this many samples.
    public var maxBatch: Int
    /// Samples kept for retry while the store cannot be written; beyond it the oldest go.
    public var maxPending: Int
    /// Locations that win over what sensors report.
    public var locationOverrides: [SensorID: HeartRateSensorLocation]
    /// The rules events are found by (`[alerts]`); nil: no events.
    public var alerts: AlertRules?
    /// Whether straps stream waveforms here (a sensor with `ecg` on, or a replay): the
    /// waveform types are asked for as well.
    public var recordsWaveforms: Bool

    public init(
        source: HealthSource, flushInterval: Duration = .milliseconds(500), maxBatch: Int = 1000,
        maxPending: Int = 200_000, locationOverrides: [SensorID: HeartRateSensorLocation] = [:], alerts: AlertRules? = .defaults,
        recordsWaveforms: Bool = false
    ) {
        self.recordsWaveforms = recordsWaveforms
        self.source = source
        self.flushInterval = flushInterval
        self.maxBatch = maxBatch
        self.maxPending = maxPending
        self.locationOverrides = locationOverrides
        self.alerts = alerts
    }

    /// The types this ingest asks to share: the written types, and as hrmd the figure types
    /// and (when it finds events) the event types.
    public var requestedTypes: [SampleType] {
        let waveforms = recordsWaveforms ? SampleType.waveformTypes : []
        guard source.name == HealthSource.daemonName else { return Self.writtenTypes + waveforms }
        return Self.writtenTypes + (alerts != nil ? SampleType.eventTypes : []) + SampleType.figureTypes + waveforms
    }

    /// The types ingest writes, and asks permission for.
    public static let writtenTypes: [SampleType] = [.heartRate, .rrInterval, .activeEnergyBurned]
}

/// Totals of one ingest run.
public struct IngestCounters: Sendable, Equatable {
    public var frames = 0
    public var stored = 0
    /// Samples whose identity was already stored (a replay of what was stored live, say).
    public var unchanged = 0
    public var replaced = 0
    /// Samples not stored because the source lacks share authorization.
    public var denied = 0
    public var skipped = 0
    /// Samples dropped because the store stayed unwritable past the retry buffer.
    public var lost = 0
    public var pending = 0
    /// Sensors streaming now (live pipeline only).
    public var streamingSensors = 0
    /// Waveform instants (ECG, acceleration) stored.
    public var waveformInstants = 0
    public init() {}

    /// What the pipeline did, as its log lines say it: "N frames, N samples stored, N already
    /// stored, N not authorized, N skipped" (and the samples kept for the next write, if any).
    public var summary: String {
        var done = "\(frames) frames, \(stored) samples stored, \(unchanged) already stored, \(denied) not authorized, \(skipped) skipped"
        if waveformInstants > 0 { done += ", \(waveformInstants) ECG or acceleration instants stored" }
        return pending > 0 ? done + ", \(pending) kept for the next write" : done
    }
}
