import HealthModel
import HealthStore
import Logging
import SensorFrames
import Timestamps

/// The synchronous heart of ingest, shared by the live pipeline and replays: frames in,
/// typed samples through the stored-sample policy, authorized batched writes out. A write
/// that fails keeps its samples for the next flush, so nothing accepted is lost while the
/// store is briefly unavailable.
public struct FrameIngestor {
    public let settings: IngestSettings
    public private(set) var counters = IngestCounters()
    private let store: HealthStore
    private let logger: Logger
    private var interpreter: FrameInterpreter
    private var skips: SkipLedger
    private var authorization: AuthorizationWatch
    private var pending: [QuantitySample] = []
    private var failing = false
    /// The events found in what is written (hrmd's own ingest only).
    private var events: EventRecorder?
    /// Readings skipped for want of skin contact since the last write, for the events.
    private var contactLost: [ContactLostReading] = []
    /// The figures worked out from what is written (hrmd's own ingest only).
    private var figures: FigureRecorder?
    /// The straps' PMD streams (ECG, acceleration), recorded as waveforms.
    private var waveforms: WaveformRecorder

    public init(store: HealthStore, settings: IngestSettings, logger: Logger) {
        self.store = store
        self.settings = settings
        self.logger = logger
        self.interpreter = FrameInterpreter(locationOverrides: settings.locationOverrides)
        self.skips = SkipLedger(logger: logger)
        self.authorization = AuthorizationWatch(source: settings.source.name, logger: logger)
        if let rules = settings.alerts, settings.source.name == HealthSource.eventWriter {
            self.events = EventRecorder(rules: rules, logger: logger)
        }
        if settings.source.name == HealthSource.daemonName {
            self.figures = FigureRecorder(source: settings.source, logger: logger)
        }
        self.waveforms = WaveformRecorder(source: settings.source.name, logger: logger)
        pending.reserveCapacity(settings.maxBatch)
    }

    /// What the waveform recorder did so far.
    public var waveformCounters: WaveformCounters { waveforms.counters }

    /// Skips so far, per device and reason.
    public var skipTotals: [(device: SensorID, reason: String, count: Int)] {
        skips.totals.sorted { $0.key < $1.key }.map { ($0.key.device, $0.key.category, $0.value) }
    }

    /// The share status of each written type as the last write saw it.
    public var authorizationStatuses: [SampleType: AuthorizationStatus] { authorization.statuses }

    /// Records the authorization request so `hrmctl auth list` shows it, and logs the state.
    public mutating func announce() {
        do {
            authorization.observe(try store.requestAuthorization(source: settings.source.name, toShare: settings.requestedTypes))
        } catch {
            logger.error("cannot record the authorization request: \(error)")
        }
    }

    /// Replaces the locations that win over what sensors report.
    public mutating func updateLocationOverrides(_ overrides: [SensorID: HeartRateSensorLocation]) {
        interpreter.locationOverrides = overrides
    }

    /// The battery level `device` last reported, in percent.
    public func batteryLevel(of device: SensorID) -> Int? { interpreter.profiles[device]?.battery }

    /// Takes one frame; writes when the batch is full. Returns how many skips it caused.
    @discardableResult
    public mutating func accept(_ frame: SensorFrame) -> Int {
        skips(accepting: frame).count
    }

    /// Takes one frame as `accept` does; returns why it, or part of it, was skipped (a replay
    /// tells a frame that does not decode with its line).
    public mutating func skips(accepting frame: SensorFrame) -> [SkipReason] {
        counters.frames += 1
        let before = pending.count
        var skipped = interpreter.interpret(frame, into: &pending)
        if WaveformRecorder.follows(frame) { skipped += waveforms.take(frame) }
        if pending.count > before { waveforms.tagMotion(&pending[before...]) }
        for reason in skipped { skips.record(reason, device: frame.device) }
        if events != nil {
            if skipped.contains(.contactNotDetected) { contactLost.append(ContactLostReading(device: frame.device.rawValue, time: frame.time)) }
            let store = self.store
            events?.link(frame.device.rawValue, up: frame.kind != .disconnected, at: frame.time, in: store)
        }
        counters.skipped += skipped.count
        if pending.count >= settings.maxBatch { flush() }
        return skipped
    }

    /// The live pipeline's tick: opens the events that the time alone completes (a strap's
    /// link down long enough), then writes the pending batch. Replays only flush: their time
    /// is their frames'.
    public mutating func tick(now: Timestamp) {
        let store = self.store
        events?.tick(now: now, in: store)
        flush()
    }

    /// Writes the pending batch (and logs skip summaries when due).
    public mutating func flush() {
        skips.summarize()
        waveforms.flush(to: store)
        counters.waveformInstants = waveforms.counters.stored
        guard !pending.isEmpty else {
            if !contactLost.isEmpty { observeEvents(in: []) }
            return
        }
        do {
            let report = try store.save(pending, from: settings.source)
            authorization.observe(report.authorization)
            counters.stored += report.stored
            counters.unchanged += report.unchanged
            counters.replaced += report.replaced
            counters.denied += report.deniedCount
            // Events come from stored heart rate only: none from samples hrmd may not store.
            observeEvents(in: report.authorization[.heartRate] == .sharingAuthorized ? pending : [])
            // Figures come from stored samples only.
            let store = self.store
            figures?.observe(pending, stored: { report.authorization[$0] == .sharingAuthorized }, in: store)
            pending.removeAll(keepingCapacity: true)
            if failing {
                failing = false
                logger.notice("the store is writable again")
            }
        } catch {
            if !failing {
                failing = true
                logger.error("cannot write to the store (samples are kept and retried): \(error)")
            }
            if pending.count > settings.maxPending {
                let excess = pending.count - settings.maxPending
                pending.removeFirst(excess)
                counters.lost += excess
                logger.error("dropped the \(excess) oldest unwritten samples: the store has been unwritable too long")
            }
        }
        counters.pending = pending.count
    }

    /// Hands the events' detectors what was written and the readings without contact.
    private mutating func observeEvents(in written: [QuantitySample]) {
        guard var recorder = events else { return }
        events = nil
        recorder.observe(
            written, contactLost: contactLost, batteryLevels: { [interpreter] in interpreter.profiles[SensorID(rawValue: $0)]?.battery },
            in: store)
        contactLost.removeAll(keepingCapacity: true)
        events = recorder
    }

    /// The last flush: retried a few times so a briefly locked store does not lose the batch.
    /// `closingEvents` closes the events still open at their last reading and works out the
    /// figures the recording's end completes (the end of a recording); the live daemon leaves
    /// them open for its next run to continue.
    public mutating func finish(closingEvents: Bool = false) {
        for _ in 0..<3 where !pending.isEmpty { flush() }
        waveforms.finish(in: store)
        counters.waveformInstants = waveforms.counters.stored
        if var recorder = events {
            if closingEvents { recorder.finish(in: store) } else { recorder.keepOpen(in: store) }
            events = recorder
        }
        // A recording's end completes its last SDNN windows and the days it outlived.
        if closingEvents, var recorder = figures {
            recorder.finish(in: store, now: .now())
            figures = recorder
        }
        skips.summarize(force: true)
        if !pending.isEmpty {
            counters.lost += pending.count
            logger.error("could not write \(pending.count) samples before stopping")
            pending.removeAll()
            counters.pending = 0
        }
    }
}
