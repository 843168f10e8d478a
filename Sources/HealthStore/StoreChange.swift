import HealthModel
import GRDB
import Synchronization

/// What one committed write transaction changed: samples added or deleted, workouts started,
/// changed or deleted.
public struct StoreChange: Sendable, Hashable {
    /// The newest anchor before the transaction: a follower that has heard of every change up
    /// to it can apply this one without reading the store.
    public var previousAnchor: Int64
    /// The newest anchor after the commit: `changes(of:since:)` from an earlier anchor
    /// reports this change.
    public var anchor: Int64
    /// Per type, the sources whose samples were added or deleted.
    public var sources: [SampleType: Set<String>]
    /// What changed, as the anchored queries report it; nil when the transaction changed more
    /// than ``StoreChange/detailLimit`` samples (an import): read them with `changes(of:since:)`.
    public var detail: ChangeDetail?

    /// The samples (added plus deleted) a change carries at most.
    public static let detailLimit = 20_000

    public init(previousAnchor: Int64 = 0, anchor: Int64, sources: [SampleType: Set<String>], detail: ChangeDetail? = nil) {
        self.previousAnchor = previousAnchor
        self.anchor = anchor
        self.sources = sources
        self.detail = detail
    }
}

/// The objects one transaction changed, each as a reader reads it back: `added` equals what
/// `changes(of:since:)` returns for the transaction's anchors (with sources, devices,
/// metadata and beat stamps as stored), `workouts` what `workoutChanges(since:)` returns.
public struct ChangeDetail: Sendable, Hashable {
    /// The samples added, in anchor order.
    public var added: [StoredSample] = []
    /// The samples deleted (or replaced by a higher sync version), in anchor order.
    public var deleted: [DeletedSample] = []
    /// The workouts started or changed, as they are after the transaction.
    public var workouts: [Workout] = []
    /// The ids of the workouts deleted.
    public var deletedWorkouts: [String] = []
    /// The events opened, extended or closed, as they are after the transaction.
    public var events: [HealthEvent] = []
    /// The events deleted.
    public var deletedEvents: [DeletedEvent] = []
    /// The waveform recordings grown, started or ended: each recording as it is after the
    /// transaction, with the samples it stored.
    public var waveforms: [WaveformPart] = []
    /// The waveform recordings deleted.
    public var deletedWaveforms: [DeletedWaveform] = []

    public init(
        added: [StoredSample] = [], deleted: [DeletedSample] = [], workouts: [Workout] = [], deletedWorkouts: [String] = [],
        events: [HealthEvent] = [], deletedEvents: [DeletedEvent] = [], waveforms: [WaveformPart] = [],
        deletedWaveforms: [DeletedWaveform] = []
    ) {
        self.added = added
        self.deleted = deleted
        self.workouts = workouts
        self.deletedWorkouts = deletedWorkouts
        self.events = events
        self.deletedEvents = deletedEvents
        self.waveforms = waveforms
        self.deletedWaveforms = deletedWaveforms
    }
}

/// A registration made by `HealthStore.observeChanges`; the handler is called until `cancel()`
/// or until this token is released.
public final class StoreChangeObservation: Sendable {
    private let observers: ChangeObservers
    private let id: UInt64

    fileprivate init(observers: ChangeObservers, id: UInt64) {
        self.observers = observers
        self.id = id
    }

    /// Stops the calls; the handler is not called after this returns (unless a call already
    /// started on another thread).
    public func cancel() { observers.remove(id) }

    deinit { cancel() }
}

/// The handlers of one store, called after each commit that added or deleted samples.
final class ChangeObservers: Sendable {
    private struct State {
        var handlers: [UInt64: @Sendable (StoreChange) -> Void] = [:]
        var nextID: UInt64 = 0
    }

    private let state = Mutex(State())

    func add(_ handler: @escaping @Sendable (StoreChange) -> Void) -> StoreChangeObservation {
        let id = state.withLock { state in
            state.nextID += 1
            state.handlers[state.nextID] = handler
            return state.nextID
        }
        return StoreChangeObservation(observers: self, id: id)
    }

    func remove(_ id: UInt64) {
        _ = state.withLock { $0.handlers.removeValue(forKey: id) }
    }

    /// Whether anyone listens: when nobody does, a write announces nothing and skips reading
    /// the anchor to announce.
    var isObserved: Bool { state.withLock { !$0.handlers.isEmpty } }

    /// Calls every handler (outside the lock, so a handler may cancel or observe).
    func publish(_ change: StoreChange) {
        let handlers = state.withLock { $0.handlers.sorted { $0.key < $1.key }.map(\.value) }
        for handler in handlers { handler(change) }
    }
}

/// What one write transaction changed, collected as it goes: the types and sources, and
/// (up to ``StoreChange/detailLimit`` samples) the objects themselves.
struct ChangeCollector {
    private(set) var sources: [SampleType: Set<String>] = [:]
    /// A sample added, as its chunk holds it: made into a `StoredSample` at the end, with
    /// the contexts readers use.
    struct AddedPoint {
        var type: SampleType
        var key: SeriesKey
        var shape: ChunkShape
        var start: Int64
        var value: Double
        var anchor: Int64
        var antBeat: ANTBeatStamp?
    }

    private var added: [AddedPoint] = []
    private var deleted: [DeletedSample] = []
    private var workouts: [Workout] = []
    private var deletedWorkouts: [String] = []
    private var events: [HealthEvent] = []
    private var deletedEvents: [DeletedEvent] = []
    private var waveforms: [WaveformPart] = []
    private var deletedWaveforms: [DeletedWaveform] = []
    /// More samples changed than a change carries.
    private var overflowed = false

    var isEmpty: Bool { sources.isEmpty }

    mutating func record(_ type: SampleType, source: String) {
        sources[type, default: []].insert(source)
    }

    mutating func recordAdded(_ point: AddedPoint, source: String) {
        record(point.type, source: source)
        guard keepsDetail() else { return }
        added.append(point)
    }

    mutating func recordDeleted(_ sample: DeletedSample) {
        record(sample.type, source: sample.source)
        guard keepsDetail() else { return }
        deleted.append(sample)
    }

    mutating func recordWorkout(_ workout: Workout) {
        record(.workout, source: workout.source)
        workouts.append(workout)
    }

    mutating func recordDeletedWorkout(_ id: String, source: String) {
        record(.workout, source: source)
        deletedWorkouts.append(id)
    }

    mutating func recordEvent(_ event: HealthEvent) {
        record(event.type, source: event.source)
        events.append(event)
    }

    mutating func recordDeletedEvent(_ event: HealthEvent) {
        record(event.type, source: event.source)
        deletedEvents.append(DeletedEvent(event))
    }

    mutating func recordWaveform(_ part: WaveformPart) {
        record(part.recording.type, source: part.recording.source)
        waveforms.append(part)
    }

    mutating func recordDeletedWaveform(_ recording: DeletedWaveform) {
        record(recording.type, source: recording.source)
        deletedWaveforms.append(recording)
    }

    /// Whether one more sample fits in the detail; past the limit the detail is dropped.
    private mutating func keepsDetail() -> Bool {
        guard !overflowed else { return false }
        guard added.count + deleted.count < StoreChange.detailLimit else {
            overflowed = true
            added = []
            deleted = []
            return false
        }
        return true
    }

    /// The detail, its samples made as a reader makes them (inside the transaction: the
    /// source and device rows are the ones just written); nil past the limit.
    func detail(_ db: Database) throws -> ChangeDetail? {
        guard !overflowed else { return nil }
        var contexts = ChunkContexts()
        var samples: [StoredSample] = []
        samples.reserveCapacity(added.count)
        for point in added {
            let context = try contexts.add(key: point.key, shape: point.shape, db)
            var sample = contexts.sample(type: point.type, start: point.start, value: point.value, anchor: point.anchor, context: context)
            sample.sample.antBeat = point.antBeat
            samples.append(sample)
        }
        samples.sort { $0.id < $1.id }
        return ChangeDetail(
            added: samples, deleted: deleted.sorted { $0.anchor < $1.anchor }, workouts: workouts, deletedWorkouts: deletedWorkouts,
            events: events, deletedEvents: deletedEvents, waveforms: waveforms, deletedWaveforms: deletedWaveforms)
    }
}

extension HealthStore {
    /// Calls `handler` after every committed write through this store that added or deleted
    /// samples or changed workouts (a save, a delete, a replacement by a higher sync version,
    /// a workout's start, event, end or deletion), with the anchors before and after and what
    /// changed (``StoreChange/detail``). It is called on the thread that wrote, after the
    /// commit and before the write returns, never for a transaction that rolled back. Keep
    /// it cheap: it delays the writer. It may read the store. Writes from several threads
    /// are each announced on their own thread, so two may arrive out of anchor order. Writes
    /// by other processes or other `HealthStore` values on the same file are not announced:
    /// follow them with `changes(of:since:)`.
    public func observeChanges(_ handler: @escaping @Sendable (StoreChange) -> Void) -> StoreChangeObservation {
        changeObservers.add(handler)
    }

    /// Runs `body` in a write transaction and, once it has committed, announces what it
    /// collected (nothing when it collected no change, or nobody listens).
    func writeAnnouncing<T>(_ body: (Database) throws -> (T, ChangeCollector?)) throws(HealthStoreError) -> T {
        let (result, change) = try write { db -> (T, StoreChange?) in
            let observed = changeObservers.isObserved
            let before = observed ? try AnchorSequence(db).last : 0
            let (result, collected) = try body(db)
            guard observed, let collected, !collected.isEmpty else { return (result, nil) }
            return (result, StoreChange(
                previousAnchor: before, anchor: try AnchorSequence(db).last, sources: collected.sources, detail: try collected.detail(db)))
        }
        if let change { changeObservers.publish(change) }
        return result
    }
}
