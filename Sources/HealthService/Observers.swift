import HealthRequests
import HealthModel
import HealthStore
import HealthWire
import Synchronization

/// Who observes which type (HKObserverQuery): one observation per caller, source and type,
/// until the caller unobserves or leaves the bus. Bounded per connection, per user and in all,
/// so a misbehaving client cannot grow the daemon's memory, and one user cannot take the
/// slots the others need (the bound in all is 16 users' worth).
final class ObserverRegistry: Sendable {
    struct Observation: Sendable, Hashable {
        let busName: String
        /// The uid of the connection: observations are bounded per user as well.
        let uid: UInt32
        let source: String
        let type: SampleType
        /// A manager sees every source's changes, as its queries do.
        let isManager: Bool
    }

    private struct Key: Hashable {
        let busName: String
        let source: String
        let type: SampleType
    }

    private let observations = Mutex<[Key: Observation]>([:])

    /// Adds an observation; an existing one is kept (observing twice is one observation).
    func add(_ observation: Observation) throws(RequestFailure) {
        let key = Key(busName: observation.busName, source: observation.source, type: observation.type)
        let refusal: RequestFailure? = observations.withLock { all -> RequestFailure? in
            if all[key] != nil {
                all[key] = observation
                return nil
            }
            if all.count >= HealthBusLimits.observations {
                return RequestFailure(.limitsExceeded, "the service has as many observers as it takes (\(HealthBusLimits.observations))")
            }
            if all.keys.lazy.filter({ $0.busName == observation.busName }).count >= HealthBusLimits.observationsPerCaller {
                return RequestFailure(
                    .limitsExceeded, "one connection may observe at most \(HealthBusLimits.observationsPerCaller) (application, type) pairs")
            }
            if all.values.lazy.filter({ $0.uid == observation.uid }).count >= HealthBusLimits.observationsPerUser {
                return RequestFailure(
                    .limitsExceeded, "uid \(observation.uid) has \(HealthBusLimits.observationsPerUser) observations, the most one user may have; unobserve some")
            }
            all[key] = observation
            return nil
        }
        if let refusal { throw refusal }
    }

    func remove(busName: String, source: String, type: SampleType) {
        _ = observations.withLock { $0.removeValue(forKey: Key(busName: busName, source: source, type: type)) }
    }

    /// Forgets every observation of a connection that left the bus.
    func removeAll(of busName: String) {
        observations.withLock { all in all = all.filter { $0.key.busName != busName } }
    }

    func observers(of type: SampleType) -> [Observation] {
        observations.withLock { all in all.values.filter { $0.type == type } }
    }

    var count: Int { observations.withLock { $0.count } }
}

/// Changes of the store not yet told to observers, merged: however many commits happen
/// while the broadcaster is busy, it sends one signal per observer and type with the newest
/// anchor. Bounded by the number of types.
final class PendingChanges: Sendable {
    private let pending = Mutex<(anchor: Int64, sources: [SampleType: Set<String>])>((0, [:]))

    func merge(_ change: StoreChange) {
        pending.withLock { pending in
            pending.anchor = max(pending.anchor, change.anchor)
            for (type, sources) in change.sources { pending.sources[type, default: []].formUnion(sources) }
        }
    }

    /// Everything merged so far, leaving nothing pending.
    func take() -> (anchor: Int64, sources: [SampleType: Set<String>]) {
        pending.withLock { pending in
            defer { pending.sources.removeAll() }
            return pending
        }
    }
}
