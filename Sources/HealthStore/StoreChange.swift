import HealthModel
import GRDB
import Synchronization

/// What one committed write transaction changed: samples added or deleted.
public struct StoreChange: Sendable, Hashable {
    /// The newest anchor after the commit: `changes(of:since:)` from an earlier anchor
    /// reports this change.
    public var anchor: Int64
    /// Per type, the sources whose samples were added or deleted.
    public var sources: [SampleType: Set<String>]

    public init(anchor: Int64, sources: [SampleType: Set<String>]) {
        self.anchor = anchor
        self.sources = sources
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

/// The types and sources one write transaction changed, collected as it goes.
struct ChangeCollector {
    private(set) var sources: [SampleType: Set<String>] = [:]

    mutating func record(_ type: SampleType, source: String) {
        sources[type, default: []].insert(source)
    }
}

extension HealthStore {
    /// Calls `handler` after every committed write through this store that added or deleted
    /// samples (a save, a delete, a replacement by a higher sync version), with the newest
    /// anchor and the changed sources per type. It is called on the thread that wrote, after
    /// the commit and before the write returns, never for a transaction that rolled back. Keep
    /// it cheap: it delays the writer. It may read the store. Writes from several threads
    /// are each announced on their own thread, so two may arrive out of anchor order. Writes
    /// by other processes or other `HealthStore` values on the same file are not announced:
    /// follow them with `changes(of:since:)`.
    public func observeChanges(_ handler: @escaping @Sendable (StoreChange) -> Void) -> StoreChangeObservation {
        changeObservers.add(handler)
    }

    /// The change to announce once the current transaction commits, or nil when it changed no
    /// sample or nobody listens. Call at the end of a write, after its last change.
    func pendingChange(_ collected: ChangeCollector, _ db: Database) throws -> StoreChange? {
        guard !collected.sources.isEmpty, changeObservers.isObserved else { return nil }
        return StoreChange(anchor: try AnchorSequence(db).last, sources: collected.sources)
    }

    /// Runs `body` in a write transaction and, once it has committed, announces the change it
    /// returned.
    func writeAnnouncing<T>(_ body: (Database) throws -> (T, StoreChange?)) throws(HealthStoreError) -> T {
        let (result, change) = try write(body)
        if let change { changeObservers.publish(change) }
        return result
    }
}
