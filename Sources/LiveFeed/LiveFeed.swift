import HealthModel
import HealthStore
import Logging
import ServiceLifecycle
import Synchronization
import Timestamps

/// The store's new samples, workout and event changes and sensor states as they are committed, fanned
/// out to many live readers (the HTTP front's streams, the MQTT publisher). Each reader sees
/// what its source may read, as a query would show it: a manager everything, a source with
/// read authorization for a type every source's samples (or workouts) of it, any other only
/// its own; sensor states go to readers that may read heart rate. Workout deletions go to the
/// readers that may read every source's workouts. Events follow the samples' rule for their type. The store is read once per round for all readers, and
/// each reader has a bounded queue (``LiveSubscription``), so a slow reader costs only itself.
///
/// A round runs after each commit of this process and at least once a second (for writes of
/// other processes, sensor states, changed grants and the readers' rechecks).
public final class LiveFeed: Service, Sendable {
    /// What a reader is sent first: the newest sample of each device within this many seconds.
    public static let recentSeconds: Int64 = 600
    /// Changes read per type and round at most; past that the readers get a gap marker and
    /// the feed continues from the newest (a large import is not live data).
    public static let changesPerRound = 20_000
    /// Workout changes read per round at most, with the same rule.
    public static let workoutChangesPerRound = 2_000
    /// Open workouts a new reader is sent at most (the most recently started).
    public static let openWorkoutsSent = 1_000
    /// Event changes read per round at most, with the same rule.
    public static let eventChangesPerRound = 2_000
    /// Open events a new reader is sent at most (the most recently started).
    public static let openEventsSent = 1_000
    /// How often a reader hears at least a keep-alive.
    public static let keepaliveInterval = Duration.seconds(15)

    private let store: HealthStore
    private let types: [SampleType]
    private let workers = StoreWorkers(label: "hrmd.live-feed")
    private let logger: Logger
    private let roundInterval: Duration
    private let doorbell: AsyncStream<Void>
    private let ring: AsyncStream<Void>.Continuation

    private struct State {
        var subscriptions: [ObjectIdentifier: LiveSubscription] = [:]
        /// The newest sample of each (source, device).
        var latest: [String: LiveSample] = [:]
        /// Sensor states by identifier, as last sent.
        var activity: [String: SensorActivity] = [:]
        /// The open workouts, by id.
        var openWorkouts: [String: Workout] = [:]
        /// The open events, by id.
        var openEvents: [String: HealthEvent] = [:]
        /// Per type, the sources with read authorization.
        var readers: [SampleType: Set<String>] = [:]
        /// Who wore which strap when, as last read: names each sample's person.
        var people = PersonLookup([])
        /// Whether the store was read at start.
        var ready = false
    }

    private let state = Mutex(State())
    /// The changes this process committed, announced and not yet sent.
    private let announced = Mutex(AnnouncedChanges())
    private let storeReads = Atomic<Int>(0)

    /// The rounds that read the store's changes because the announced ones did not chain
    /// (another process wrote, a change was too large to carry, announcements overflowed).
    /// Changes this process commits reach the readers without a read.
    public var changeReads: Int { storeReads.load(ordering: .relaxed) }

    /// - Parameters:
    ///   - types: the sample types the feed follows.
    public init(store: HealthStore, types: [SampleType], logger: Logger, roundInterval: Duration = .seconds(1)) {
        self.store = store
        self.types = types
        self.logger = logger
        self.roundInterval = roundInterval
        (doorbell, ring) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
    }

    /// The readers now.
    public var subscriberCount: Int { state.withLock { $0.subscriptions.count } }

    /// Starts a reader: its queue first holds the newest sample of each device it may read
    /// (of the last ``recentSeconds``) and the sensor states it may see, then what comes.
    /// `recheck` is asked once a second; a non-nil answer ends the reader with that line.
    public func subscribe(_ reader: LiveReader, capacity: Int = 256, recheck: (@Sendable () -> String?)? = nil) -> LiveSubscription {
        let subscription = LiveSubscription(reader: reader, capacity: capacity, recheck: recheck)
        state.withLock { state in
            if state.ready { Self.sendSnapshot(to: subscription, state) }
            state.subscriptions[ObjectIdentifier(subscription)] = subscription
        }
        return subscription
    }

    /// Whether the feed has read the store and follows it: readers see every sample committed
    /// from then on.
    public var isReady: Bool { state.withLock { $0.ready } }

    /// The newest sample of each device `subscription` may read, and the sensor states.
    private static func sendSnapshot(to subscription: LiveSubscription, _ state: State) {
        let reader = subscription.reader
        let horizon = Timestamp.now().microsecondsSinceEpoch - recentSeconds * 1_000_000
        for sample in state.latest.values.sorted(by: { $0.stored.sample.start < $1.stored.sample.start })
        where reader.types.contains(sample.stored.sample.type) && sample.stored.sample.start.microsecondsSinceEpoch >= horizon
            && mayRead(sample.stored, reader, state.readers)
        {
            subscription.push(.sample(sample))
        }
        if maySeeSensors(reader, state.readers) {
            for activity in state.activity.values.sorted(by: { $0.identifier < $1.identifier }) { subscription.push(.state(activity)) }
        }
        if reader.types.contains(.workout) {
            for workout in state.openWorkouts.values.sorted(by: { $0.start < $1.start }) where mayRead(workout, reader, state.readers) {
                subscription.push(.workout(.changed(workout)))
            }
        }
        for event in state.openEvents.values.sorted(by: { ($0.start, $0.id) < ($1.start, $1.id) })
        where reader.types.contains(event.type) && mayRead(event, reader, state.readers) {
            subscription.push(.healthEvent(event))
        }
    }

    /// Stops a reader (its connection went away).
    public func unsubscribe(_ subscription: LiveSubscription) {
        _ = state.withLock { $0.subscriptions.removeValue(forKey: ObjectIdentifier(subscription)) }
        subscription.close()
    }

    public func run() async throws {
        let observation = store.observeChanges { [weak self, ring] change in
            self?.announced.withLock { $0.add(change) }
            ring.yield()
        }
        defer { observation.cancel() }
        var position: FeedPosition
        do {
            let (anchor, recent, open, openEvents, assignments) = try await workers.run { [store, types] () throws(HealthStoreError) in
                let anchor = try store.currentAnchor()
                let since = Timestamp(microsecondsSinceEpoch: Timestamp.now().microsecondsSinceEpoch - Self.recentSeconds * 1_000_000)
                var recent: [StoredSample] = []
                for type in types where type.kind == .quantity {
                    recent += try store.samples(SampleQuery(type: type, since: since, limit: 5000, newestFirst: true)).reversed()
                }
                let open = types.contains(.workout) ? try store.workouts(WorkoutQuery(openOnly: true, limit: Self.openWorkoutsSent)) : []
                let eventTypes = types.filter { $0.kind == .category }
                let openEvents = eventTypes.isEmpty ? [] : try store.events(EventQuery(types: eventTypes, openOnly: true, limit: Self.openEventsSent))
                return (anchor, recent, open, openEvents, try store.strapAssignments())
            }
            position = FeedPosition(followed: anchor)
            state.withLock { state in
                state.people = PersonLookup(assignments)
                for stored in recent { state.latest[Self.key(stored)] = Self.live(stored, &state.people) }
                for workout in open { state.openWorkouts[workout.id] = workout }
                for event in openEvents { state.openEvents[event.id] = event }
                state.ready = true
                // Readers that came before the feed had read the store get what they missed.
                for subscription in state.subscriptions.values { Self.sendSnapshot(to: subscription, state) }
            }
        } catch {
            logger.error("live feed: cannot read the store: \(error)")
            throw error
        }
        await withTaskGroup(of: Void.self) { group in
            group.addTask { [ring, roundInterval] in
                while !Task.isCancelled {
                    try? await Task.sleep(for: roundInterval)
                    ring.yield()
                }
            }
            var lastRecheck = ContinuousClock.now
            var lastRefresh = ContinuousClock.now - .seconds(2)
            var lastKeepalive = ContinuousClock.now
            var failing = false
            for await _ in doorbell.cancelOnGracefulShutdown() {
                let refreshing = ContinuousClock.now - lastRefresh >= .seconds(1)
                do {
                    try await round(&position, refreshing: refreshing)
                    if refreshing { lastRefresh = .now }
                    if failing { logger.notice("live feed: reading the store again") }
                    failing = false
                } catch {
                    if !failing { logger.warning("live feed: cannot read the store: \(error); retrying every round") }
                    failing = true
                }
                if ContinuousClock.now - lastRecheck >= .seconds(1) {
                    lastRecheck = .now
                    await recheckReaders()
                }
                if ContinuousClock.now - lastKeepalive >= Self.keepaliveInterval {
                    lastKeepalive = .now
                    for subscription in state.withLock({ Array($0.subscriptions.values) }) { subscription.push(.keepalive) }
                }
            }
            group.cancelAll()
        }
        let ending = state.withLock { state in
            defer { state.subscriptions.removeAll() }
            return Array(state.subscriptions.values)
        }
        for subscription in ending { subscription.push(.ended(reason: "hrmd is stopping")) }
    }

    /// Sends each reader its part of what changed after `position`, and moves it on.
    ///
    /// The changes this process committed arrive announced, with what they changed: applied in
    /// anchor order, each directly after the one before, they need no read. The store is read
    /// (once for all readers) only when the chain breaks: a change was too large to carry its
    /// detail, the announcements overflowed their bound, an announcement does not follow on,
    /// or another process wrote (an anchor a refreshing round read is still not followed at
    /// the next: an announcement comes right after its commit, so the change was nobody's
    /// here; another process's write reaches the readers within two refreshes). `refreshing` also reads the read grants, the
    /// strap assignments and the sensors' states (once a second: a round after each commit of
    /// 20 straps would otherwise read them twenty times as often), so a strap handed to
    /// someone names them within a second.
    private func round(_ position: inout FeedPosition, refreshing: Bool) async throws(HealthStoreError) {
        let (waiting, overflowed) = announced.withLock { $0.take() }
        var delivery = Delivery()
        var blocked = delivery.apply(waiting, after: &position.followed, types: types)
        let unannounced = position.seen.map { $0 > position.followed } ?? false
        let mustRead = overflowed || !blocked.isEmpty || unannounced
        guard refreshing || mustRead else {
            deliver(delivery, refreshed: nil)
            return
        }
        let known = position.followed
        let (current, read, refreshed) = try await workers.run { [store, types] () throws(HealthStoreError) in
            let current = try store.currentAnchor()
            let read = mustRead ? try Self.readChanges(after: known, through: current, of: types, in: store) : nil
            guard refreshing else { return (current, read, nil as Refreshed?) }
            var grants: [SampleType: Set<String>] = [:]
            for entry in try store.authorizationAccessEntries() where entry.access == .read && entry.status == .sharingAuthorized {
                grants[entry.type, default: []].insert(entry.source)
            }
            return (current, read, Refreshed(grants: grants, assignments: try store.strapAssignments(), activity: try store.sensorActivity()))
        }
        if let read {
            storeReads.add(1, ordering: .relaxed)
            delivery.append(read.delivery)
            position.followed = max(position.followed, read.anchor)
            blocked = delivery.apply(blocked, after: &position.followed, types: types)
            position.seen = nil
        } else if refreshing {
            // Committed but not followed yet: announced by the next refresh, or another process's.
            position.seen = current > position.followed ? current : nil
        }
        // Announced after what was read, with one before them not announced yet: the next round.
        if !blocked.isEmpty { announced.withLock { $0.putBack(blocked) } }
        deliver(delivery, refreshed: refreshed)
    }

    /// What the store holds after anchor `known` up to `current`, at most about
    /// ``changesPerRound`` samples per type and ``workoutChangesPerRound`` workout changes:
    /// past them the readers get a gap marker and the feed continues from `current` (a large
    /// import is not live data).
    private static func readChanges(after known: Int64, through current: Int64, of types: [SampleType], in store: HealthStore)
        throws(HealthStoreError) -> (delivery: Delivery, anchor: Int64)
    {
        var delivery = Delivery()
        let page = 5000
        for type in types where type.kind == .quantity {
            var anchor = known
            var added = 0
            while anchor < current {
                let changes = try store.changes(of: type, since: anchor, limit: page)
                let kept = changes.added.prefix { $0.id <= current }
                delivery.samples += kept
                added += kept.count
                guard changes.added.count + changes.deleted.count >= page, changes.anchor > anchor else { break }
                anchor = changes.anchor
                if added >= changesPerRound {
                    delivery.sampleGap = true
                    break
                }
            }
        }
        if types.contains(.workout) {
            var anchor = known
            let page = 500
            var read = 0
            while anchor < current {
                let changes = try store.workoutChanges(since: anchor, through: current, limit: page, reader: nil)
                delivery.workouts += changes.workouts
                delivery.deletedWorkouts += changes.deleted
                read += changes.workouts.count + changes.deleted.count
                guard changes.anchor > anchor, changes.workouts.count + changes.deleted.count >= page else { break }
                anchor = changes.anchor
                if read >= workoutChangesPerRound {
                    delivery.workoutGap = true
                    break
                }
            }
        }
        if types.contains(where: { $0.kind == .category }) {
            var anchor = known
            let page = 500
            while anchor < current {
                let changes = try store.eventChanges(since: anchor, through: current, limit: page)
                delivery.events += changes.events.filter { types.contains($0.type) }
                delivery.deletedEvents += changes.deleted.filter { types.contains($0.type) }
                guard changes.anchor > anchor, changes.events.count + changes.deleted.count >= page else { break }
                anchor = changes.anchor
                if delivery.events.count >= eventChangesPerRound {
                    delivery.eventGap = true
                    break
                }
            }
        }
        delivery.samples.sort { $0.id < $1.id }
        return (delivery, current)
    }

    /// Hands each reader its part of `delivery`, with the grants, assignments and sensor
    /// states of `refreshed` when a refreshing round read them.
    private func deliver(_ delivery: Delivery, refreshed: Refreshed?) {
        guard !delivery.isEmpty || refreshed != nil else { return }
        let activity = refreshed?.activity
        state.withLock { state in
            if let refreshed {
                state.readers = refreshed.grants
                state.people = PersonLookup(refreshed.assignments)
            }
            let grants = state.readers
            let arrived = delivery.samples.map { Self.live($0, &state.people) }
            var changedStates: [SensorActivity] = []
            for current in activity ?? [] {
                let previous = state.activity[current.identifier]
                if previous.map({ !Self.sameState($0, current) }) ?? true { changedStates.append(current) }
                state.activity[current.identifier] = current
            }
            for sample in arrived { state.latest[Self.key(sample.stored)] = sample }
            Self.prune(&state.latest)
            for workout in delivery.workouts { state.openWorkouts[workout.id] = workout.isOpen ? workout : nil }
            for id in delivery.deletedWorkouts { state.openWorkouts[id] = nil }
            for event in delivery.events { state.openEvents[event.id] = event.isOpen ? event : nil }
            for deleted in delivery.deletedEvents { state.openEvents[deleted.id] = nil }
            let workoutsChanged = delivery.workoutGap || !delivery.workouts.isEmpty || !delivery.deletedWorkouts.isEmpty
            for subscription in state.subscriptions.values {
                let reader = subscription.reader
                if delivery.sampleGap { subscription.push(.gap(missed: 0)) }
                for sample in arrived where reader.types.contains(sample.stored.sample.type) && Self.mayRead(sample.stored, reader, grants) {
                    subscription.push(.sample(sample))
                }
                if !changedStates.isEmpty && Self.maySeeSensors(reader, grants) {
                    for activity in changedStates { subscription.push(.state(activity)) }
                }
                if workoutsChanged, reader.types.contains(.workout) {
                    if delivery.workoutGap { subscription.push(.gap(missed: 0)) }
                    for workout in delivery.workouts where Self.mayRead(workout, reader, grants) {
                        subscription.push(.workout(.changed(workout)))
                    }
                    if Self.maySeeEveryWorkout(reader, grants) {
                        for id in delivery.deletedWorkouts { subscription.push(.workout(.deleted(id: id))) }
                    }
                }
                if delivery.eventGap, reader.types.contains(where: { $0.kind == .category }) { subscription.push(.gap(missed: 0)) }
                for event in delivery.events where reader.types.contains(event.type) && Self.mayRead(event, reader, grants) {
                    subscription.push(.healthEvent(event))
                }
                for deleted in delivery.deletedEvents where reader.types.contains(deleted.type) && Self.mayRead(deleted, reader, grants) {
                    subscription.push(.healthEventDeleted(deleted))
                }
            }
        }
    }

    /// How far the feed has followed the store.
    private struct FeedPosition {
        /// Every change up to this anchor has reached the readers (or was there at start).
        var followed: Int64
        /// The store's newest anchor at the last refresh, when it was beyond `followed` then.
        var seen: Int64? = nil
    }

    /// What a refreshing round reads besides the changes.
    private struct Refreshed: Sendable {
        /// Per type, the sources with read authorization.
        var grants: [SampleType: Set<String>]
        var assignments: [StrapAssignment]
        var activity: [SensorActivity]
    }

    /// `stored` on its way to readers, with the person who wore its strap then.
    private static func live(_ stored: StoredSample, _ people: inout PersonLookup) -> LiveSample {
        LiveSample(stored: stored, person: people.person(device: stored.sample.device?.localIdentifier, at: stored.sample.start))
    }

    /// Ends the readers whose recheck now says no (rechecks may read the store: on the workers).
    private func recheckReaders() async {
        let subscriptions = state.withLock { $0.subscriptions.values.filter { $0.recheck != nil } }
        guard !subscriptions.isEmpty else { return }
        let ended = await workers.run { () throws(Never) -> [(LiveSubscription, String)] in
            subscriptions.compactMap { subscription in subscription.recheck?().map { (subscription, $0) } }
        }
        for (subscription, reason) in ended {
            subscription.push(.ended(reason: reason))
            unsubscribe(subscription)
        }
    }

    /// Past this many devices' newest samples, those older than the snapshot's horizon (which
    /// no reader is sent) go; and past ``latestCapacity`` even recent ones, oldest first: many
    /// devices (an application saving for thousands) cannot grow the feed without end.
    static let latestPruneThreshold = 1024
    static let latestCapacity = 4096

    private static func prune(_ latest: inout [String: LiveSample]) {
        guard latest.count > latestPruneThreshold else { return }
        let horizon = Timestamp.now().microsecondsSinceEpoch - recentSeconds * 1_000_000
        latest = latest.filter { $0.value.stored.sample.start.microsecondsSinceEpoch >= horizon }
        guard latest.count > latestCapacity else { return }
        let newest = latest.sorted { $0.value.stored.sample.start > $1.value.stored.sample.start }.prefix(latestCapacity)
        latest = Dictionary(uniqueKeysWithValues: newest.map { ($0.key, $0.value) })
    }

    private static func key(_ stored: StoredSample) -> String {
        stored.source.name + "\u{0}" + stored.sample.type.identifier + "\u{0}" + (stored.sample.device?.localIdentifier ?? "")
    }

    /// The store's read rule (``ReadScope``), as ``SampleQuery/reader`` applies it.
    static func mayRead(_ stored: StoredSample, _ reader: LiveReader, _ grants: [SampleType: Set<String>]) -> Bool {
        ReadScope(reader: reader.source, isManager: reader.isManager, type: stored.sample.type, readers: grants)
            .admits(source: stored.source.name)
    }

    /// The store's read rule for events, the samples' rule for their type.
    static func mayRead(_ event: HealthEvent, _ reader: LiveReader, _ grants: [SampleType: Set<String>]) -> Bool {
        ReadScope(reader: reader.source, isManager: reader.isManager, type: event.type, readers: grants).admits(source: event.source)
    }

    /// The same rule for an event deleted.
    static func mayRead(_ deleted: DeletedEvent, _ reader: LiveReader, _ grants: [SampleType: Set<String>]) -> Bool {
        ReadScope(reader: reader.source, isManager: reader.isManager, type: deleted.type, readers: grants).admits(source: deleted.source)
    }

    /// The store's read rule for workouts: its own source's, or every one with read
    /// authorization of `workout` (a manager has it).
    static func mayRead(_ workout: Workout, _ reader: LiveReader, _ grants: [SampleType: Set<String>]) -> Bool {
        workout.source == reader.source || maySeeEveryWorkout(reader, grants)
    }

    static func maySeeEveryWorkout(_ reader: LiveReader, _ grants: [SampleType: Set<String>]) -> Bool {
        reader.isManager || grants[.workout]?.contains(reader.source) == true
    }

    /// Sensor states tell of heart-rate straps: for readers that may read every source's heart rate.
    static func maySeeSensors(_ reader: LiveReader, _ grants: [SampleType: Set<String>]) -> Bool {
        ReadScope.seesSensors(reader: reader.source, isManager: reader.isManager, readers: grants)
    }

    /// Whether two states of a sensor tell a reader the same (frame counts and times aside).
    private static func sameState(_ a: SensorActivity, _ b: SensorActivity) -> Bool {
        a.state == b.state && a.battery == b.battery && a.detail == b.detail && a.transport == b.transport
    }
}
