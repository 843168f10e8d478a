import HealthModel
import HealthStore
import HealthUnits
import Logging
import Synchronization
import TestSupport
import Testing
import Timestamps

@testable import LiveFeed

@Suite("A live reader's bounded queue")
struct LiveSubscriptionTests {
    private static func reader() -> LiveReader { LiveReader(source: "mary/app", isManager: false, types: [.heartRate]) }

    /// Event `number`, told apart by its sensor's identifier.
    private static func event(_ number: Int) -> LiveEvent {
        .state(SensorActivity(identifier: "\(number)", transport: "mock", state: "streaming", since: Timestamp(rawValue: 0), updatedAt: Timestamp(rawValue: 0)))
    }

    @Test("a reader that falls behind gets one gap marker with the count it missed, then the newest events")
    func overflowLeavesGap() async throws {
        let subscription = LiveSubscription(reader: Self.reader(), capacity: 4, recheck: nil)
        for number in 1...10 { subscription.push(Self.event(number)) }
        // 1–4 filled the queue; 5 dropped them (a gap of 4); 6–7 filled it again; 8 dropped the
        // gap and 5–7 (4 + 3 = 7); 9 and 10 follow.
        var taken: [String] = []
        for _ in 0..<4 {
            switch await subscription.next() {
            case .gap(let missed): taken.append("gap \(missed)")
            case .state(let activity): taken.append(activity.identifier)
            default: taken.append("other")
            }
        }
        #expect(taken == ["gap 7", "8", "9", "10"])
        #expect(subscription.droppedEvents == 11)
    }

    @Test("ended: the queued events are taken, then nil; a waiting reader is woken by close")
    func endAndClose() async throws {
        let subscription = LiveSubscription(reader: Self.reader(), capacity: 8, recheck: nil)
        subscription.push(.keepalive)
        subscription.push(.ended(reason: "revoked"))
        subscription.push(.keepalive)
        guard case .keepalive = await subscription.next() else { Issue.record("expected the keep-alive"); return }
        guard case .ended(let reason) = await subscription.next() else { Issue.record("expected the end"); return }
        #expect(reason == "revoked")
        #expect(await subscription.next() == nil)

        let waiting = LiveSubscription(reader: Self.reader(), capacity: 8, recheck: nil)
        let next = Task { await waiting.next() }
        try await eventually("the reader waits") { waiting.isWaiting }
        waiting.close()
        #expect(try await withinHangBound("the woken reader") { await next.value } == nil)
    }

    @Test("a reader's task cancelled while it waits gets nil")
    func cancellation() async throws {
        let subscription = LiveSubscription(reader: Self.reader(), capacity: 8, recheck: nil)
        let task = Task { await subscription.next() }
        task.cancel()
        #expect(try await withinHangBound("the cancelled reader") { await task.value } == nil)
    }
}

@Suite("The live feed: what each reader may read, as a query shows it", .timeLimit(.minutes(HangBound.suiteMinutes)))
struct LiveFeedTests {
    static let hrmd = HealthSource(name: "hrmd")

    private static func heartRate(_ bpm: Double, device: String, at time: Timestamp = .now()) throws -> QuantitySample {
        try QuantitySample(
            type: .heartRate, quantity: Quantity(unit: .countPerMinute, doubleValue: bpm), start: time, end: time,
            device: HealthDevice(localIdentifier: device), metadata: .empty)
    }

    /// A feed on a fresh store file, running until `body` returns.
    private static func withFeed(
        types: [SampleType] = [.heartRate], roundInterval: Duration = .milliseconds(50),
        _ body: @Sendable (HealthStore, LiveFeed, String) async throws -> Void
    ) async throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("live.sqlite")
        let store = try HealthStore.open(path: path, mode: .createIfMissing)
        try store.setShareAuthorization(.sharingAuthorized, source: hrmd.name, type: .heartRate)
        try store.setShareAuthorization(.sharingAuthorized, source: "mary/app", type: .heartRate)
        let feed = LiveFeed(store: store, types: types, logger: Logger(label: "test"), roundInterval: roundInterval)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await feed.run() }
            try await eventually("the feed reads the store") { feed.isReady }
            try await body(store, feed, path)
            group.cancelAll()
        }
    }

    /// The values of the next `count` samples `subscription` receives (other events skipped).
    private static func values(_ subscription: LiveSubscription, count: Int) async throws -> [String] {
        try await withinHangBound("\(count) live samples") {
            var values: [String] = []
            while values.count < count, let event = await subscription.next() {
                if case .sample(let sample) = event {
                    values.append(String(decoding: sample.rendered(by: ValueText.self, namingPerson: false), as: UTF8.self))
                }
            }
            return values
        }
    }

    @Test("a manager reads every source, a source its own, and others' once it may read them")
    func readRule() async throws {
        try await Self.withFeed { store, feed, _ in
            let manager = feed.subscribe(LiveReader(source: "root/hrmctl", isManager: true, types: [.heartRate]))
            let mary = feed.subscribe(LiveReader(source: "mary/app", isManager: false, types: [.heartRate]))
            let john = feed.subscribe(LiveReader(source: "john/app", isManager: false, types: [.heartRate]))
            _ = try store.save([try Self.heartRate(70, device: "strap-1")], from: Self.hrmd)
            _ = try store.save([try Self.heartRate(81, device: "mary-watch")], from: HealthSource(name: "mary/app"))
            #expect(try await Self.values(manager, count: 2) == ["70.0", "81.0"])
            #expect(try await Self.values(mary, count: 1) == ["81.0"])

            try store.setReadAuthorization(.sharingAuthorized, source: "john/app", type: .heartRate)
            // The grant applies from the feed's next refresh. A round hands a sample to every
            // reader at once, so once the manager has received one, john has it too if the
            // feed has seen his grant (waiting on john alone would wait for his keep-alive).
            try await eventually("john's grant seen by the feed") {
                _ = try store.save([try Self.heartRate(90, device: "strap-1")], from: Self.hrmd)
                _ = try await Self.values(manager, count: 1)
                return john.queuedSamples > 0
            }
            try store.setReadAuthorization(.sharingDenied, source: "john/app", type: .heartRate)
            try await eventually("john's revoke seen by the feed") {
                while john.queuedSamples > 0 { _ = await john.next() }
                _ = try store.save([try Self.heartRate(60, device: "strap-1")], from: Self.hrmd)
                _ = try store.save([try Self.heartRate(99, device: "mary-watch")], from: HealthSource(name: "mary/app"))
                // Once revoked, a round gives john nothing: mary's own sample arrives at mary's
                // reader while john's queue stays without it.
                _ = try await Self.values(mary, count: 1)
                return john.queuedSamples == 0
            }
        }
    }

    /// The next `count` workout changes `subscription` receives (other events skipped).
    private static func workoutChanges(_ subscription: LiveSubscription, count: Int) async throws -> [LiveWorkout] {
        try await withinHangBound("\(count) workout changes") {
            var changes: [LiveWorkout] = []
            while changes.count < count, let event = await subscription.next() {
                if case .workout(let change) = event { changes.append(change) }
            }
            return changes
        }
    }

    @Test("workout changes reach the readers that may read them, whole; a new reader is sent the open ones")
    func workouts() async throws {
        try await Self.withFeed(types: [.heartRate, .workout]) { store, feed, _ in
            let start = Timestamp.now()
            let open = Workout(
                id: "w-open", source: "mary/app", person: nil, device: "strap-9", activity: .cycling, start: start.advanced(bySeconds: -60))
            try store.saveWorkout(open)
            let manager = feed.subscribe(LiveReader(source: "root/hrmctl", isManager: true, types: [.heartRate, .workout]))
            let mary = feed.subscribe(LiveReader(source: "mary/app", isManager: false, types: [.workout]))
            let john = feed.subscribe(LiveReader(source: "john/app", isManager: false, types: [.heartRate, .workout]))
            #expect(try await Self.workoutChanges(manager, count: 1) == [.changed(open)], "the open workout, first")
            // Each change is awaited before the next: changes made within one round come as the
            // workout is after them (a deletion alone).
            let lapped = try store.addWorkoutEvent(WorkoutEvent(.lap, at: start), to: open.id, writer: "mary/app")
            #expect(try await Self.workoutChanges(manager, count: 1) == [.changed(lapped)])
            let ended = try store.endWorkout(open.id, at: start.advanced(bySeconds: 1), writer: "mary/app")
            #expect(try await Self.workoutChanges(manager, count: 1) == [.changed(ended)])
            try store.deleteWorkout(open.id, writer: nil)
            #expect(try await Self.workoutChanges(manager, count: 1) == [.deleted(id: open.id)])
            let marys = try await Self.workoutChanges(mary, count: 3)
            #expect(marys == [.changed(open), .changed(lapped), .changed(ended)], "her own; a deletion only for those who read every source's")
            // john may read none of it: his own workout, saved after, is the first he gets.
            let his = Workout(id: "w-john", source: "john/app", person: nil, device: "strap-8", activity: .yoga, start: start)
            try store.saveWorkout(his)
            #expect(try await Self.workoutChanges(john, count: 1) == [.changed(his)])
        }
    }

    /// The next `count` events `subscription` receives (other items skipped).
    private static func healthEvents(_ subscription: LiveSubscription, count: Int) async throws -> [HealthEvent] {
        try await withinHangBound("\(count) events") {
            var events: [HealthEvent] = []
            while events.count < count, let item = await subscription.next() {
                if case .healthEvent(let event) = item { events.append(event) }
            }
            return events
        }
    }

    @Test("events reach the readers that may read their type, each save as saved; a new reader is sent the open ones; no read of the store")
    func events() async throws {
        try await Self.withFeed(types: [.heartRate, .highHeartRateEvent, .lowHeartRateEvent]) { store, feed, _ in
            try store.setShareAuthorization(.sharingAuthorized, source: Self.hrmd.name, type: .highHeartRateEvent)
            let start = Timestamp.now()
            let opened = HealthEvent(
                id: "e-1", type: .highHeartRateEvent, source: Self.hrmd.name, device: "strap-1", person: nil, start: start, end: nil,
                latest: start.advanced(bySeconds: 60), threshold: 120, extreme: 131)
            let types: Set<SampleType> = [.heartRate, .highHeartRateEvent]
            let manager = feed.subscribe(LiveReader(source: "root/hrmctl", isManager: true, types: types))
            let reader = feed.subscribe(LiveReader(source: "mary/app", isManager: false, types: types))
            let blind = feed.subscribe(LiveReader(source: "john/app", isManager: false, types: types))
            // Mary's grants apply from the feed's next refresh, which reads them all at once:
            // once hrmd's heart rate reaches her, her grant of the event type is seen too (a
            // round hands a sample to every reader at once, the manager's included).
            try store.setReadAuthorization(.sharingAuthorized, source: "mary/app", type: .highHeartRateEvent)
            try store.setReadAuthorization(.sharingAuthorized, source: "mary/app", type: .heartRate)
            try await eventually("mary's grants seen by the feed") {
                _ = try store.save([try Self.heartRate(70, device: "strap-1")], from: Self.hrmd)
                _ = try await Self.values(manager, count: 1)
                return reader.queuedSamples > 0
            }
            let reads = feed.changeReads
            try store.saveEvent(opened)
            var ended = opened
            ended.end = start.advanced(bySeconds: 90)
            ended.latest = start.advanced(bySeconds: 90)
            #expect(try await Self.healthEvents(manager, count: 1) == [opened])
            #expect(try await Self.healthEvents(reader, count: 1) == [opened])
            // A reader that comes while it is open is sent it first.
            let late = feed.subscribe(LiveReader(source: "root/late", isManager: true, types: types))
            #expect(try await Self.healthEvents(late, count: 1) == [opened])
            try store.saveEvent(ended)
            #expect(try await Self.healthEvents(manager, count: 1) == [ended])
            #expect(try await Self.healthEvents(reader, count: 1) == [ended])
            // Deleted, it reaches the readers of its type as deleted.
            try store.deleteEvent(ended.id)
            let deletion = try await withinHangBound("the deletion") { () async -> DeletedEvent? in
                while let item = await reader.next() {
                    if case .healthEventDeleted(let deleted) = item { return deleted }
                }
                return nil
            }
            #expect(deletion == DeletedEvent(ended))
            #expect(feed.changeReads == reads, "announced events were read back")
            // john may not read the type: the sample saved after the events is the next he gets.
            try store.setShareAuthorization(.sharingAuthorized, source: "john/app", type: .heartRate)
            _ = try store.save([try Self.heartRate(66, device: "john-watch")], from: HealthSource(name: "john/app"))
            let next = try await withinHangBound("john's sample") { () async -> LiveEvent? in
                while let item = await blind.next() {
                    switch item {
                    case .healthEvent, .sample: return item
                    default: continue
                    }
                }
                return nil
            }
            guard case .sample(let sample) = next else {
                Issue.record("john got \(String(describing: next)) before his own sample")
                return
            }
            #expect(sample.stored.source.name == "john/app")
            // Once ended, a new reader is not sent it.
            let after = feed.subscribe(LiveReader(source: "root/after", isManager: true, types: types))
            _ = try store.save([try Self.heartRate(71, device: "strap-1")], from: Self.hrmd)
            let first = try await withinHangBound("the sample after") { () async -> LiveEvent? in
                while let item = await after.next() {
                    switch item {
                    case .healthEvent: return item
                    case .sample(let sample) where sample.stored.sample.canonicalValue == 71: return item
                    default: continue
                    }
                }
                return nil
            }
            guard case .sample = first else {
                Issue.record("a new reader got \(String(describing: first)) of an ended event")
                return
            }
        }
    }

    @Test("a change this process commits reaches each reader once, as announced, without a read of the store; another process's write is read, once")
    func announcedChangesNeedNoRead() async throws {
        // No timed rounds: each round is the one a commit rings, after its announcement.
        try await Self.withFeed(types: [.heartRate, .workout], roundInterval: .seconds(3600)) { store, feed, path in
            let manager = feed.subscribe(LiveReader(source: "root/hrmctl", isManager: true, types: [.heartRate, .workout]))
            let mary = feed.subscribe(LiveReader(source: "mary/app", isManager: false, types: [.heartRate]))
            let reads = feed.changeReads
            for bpm: Double in [70, 71, 72] { _ = try store.save([try Self.heartRate(bpm, device: "strap-1")], from: Self.hrmd) }
            let workout = Workout(id: "w-1", source: "mary/app", person: nil, device: "strap-1", activity: .running, start: .now())
            try store.saveWorkout(workout)
            _ = try store.save([try Self.heartRate(73, device: "strap-1")], from: Self.hrmd)
            // Samples in commit order; a round hands out its samples before its workout changes.
            let first = try await Self.events(manager, count: 5)
            #expect(first.filter { !$0.hasPrefix("workout") } == ["70.0", "71.0", "72.0", "73.0"])
            #expect(first.filter { $0.hasPrefix("workout") } == ["workout w-1"])
            #expect(feed.changeReads == reads, "no round read the store")

            // Another process (here another store value on the file) writes: nobody announces
            // it, so the next round's chain breaks and the feed reads what it missed, once.
            let other = try HealthStore.open(path: path, mode: .existingOnly)
            _ = try other.save([try Self.heartRate(80, device: "strap-2")], from: Self.hrmd)
            _ = try store.save([try Self.heartRate(81, device: "strap-1")], from: Self.hrmd)
            #expect(try await Self.events(manager, count: 2) == ["80.0", "81.0"])
            #expect(feed.changeReads == reads + 1)
            // Nothing came twice: the next thing each reader gets is the next sample.
            _ = try store.save([try Self.heartRate(82, device: "strap-1")], from: Self.hrmd)
            #expect(try await Self.events(manager, count: 1) == ["82.0"])
            // mary may read none of hrmd's samples: her own is the first she gets.
            _ = try store.save([try Self.heartRate(90, device: "mary-watch")], from: HealthSource(name: "mary/app"))
            #expect(try await Self.values(mary, count: 1) == ["90.0"])
            #expect(feed.changeReads == reads + 1)
        }
    }

    /// The next `count` samples (as their values) and workout changes `subscription` receives.
    private static func events(_ subscription: LiveSubscription, count: Int) async throws -> [String] {
        try await withinHangBound("\(count) live events") {
            var events: [String] = []
            while events.count < count, let event = await subscription.next() {
                switch event {
                case .sample(let sample): events.append(String(decoding: sample.rendered(by: ValueText.self, namingPerson: false), as: UTF8.self))
                case .workout(.changed(let workout)): events.append("workout \(workout.id)")
                case .workout(.deleted(let id)): events.append("deleted \(id)")
                default: continue
                }
            }
            return events
        }
    }

    @Test("a new reader first gets the newest sample of each device it may read")
    func snapshot() async throws {
        try await Self.withFeed { store, feed, _ in
            let first = feed.subscribe(LiveReader(source: "root/hrmctl", isManager: true, types: [.heartRate]))
            _ = try store.save([try Self.heartRate(61, device: "a"), try Self.heartRate(62, device: "b")], from: Self.hrmd)
            _ = try store.save([try Self.heartRate(63, device: "a")], from: Self.hrmd)
            #expect(try await Self.values(first, count: 3).count == 3)
            let later = feed.subscribe(LiveReader(source: "root/hrmctl", isManager: true, types: [.heartRate]))
            #expect(Set(try await Self.values(later, count: 2)) == ["62.0", "63.0"])
        }
    }

    @Test("each sample names who wore its strap then, once the feed has read the assignment; a front names them only when asked")
    func samplesNameTheirPerson() async throws {
        try await Self.withFeed { store, feed, _ in
            try store.savePerson(Person(name: "ann", zoneMethod: .percentOfMaximum), creating: true)
            try store.assignStrap(device: "strap-1", person: "ann", from: Timestamp(microsecondsSinceEpoch: 0), until: nil)
            let manager = feed.subscribe(LiveReader(source: "root/hrmctl", isManager: true, types: [.heartRate]))
            // The assignment applies from the feed's next refresh: wait for a sample that names her.
            let named = try await withinHangBound("a sample of strap-1 naming ann") { () async -> LiveSample? in
                while true {
                    _ = try? store.save([try Self.heartRate(70, device: "strap-1")], from: Self.hrmd)
                    guard let event = await manager.next() else { return nil }
                    if case .sample(let sample) = event, sample.person == "ann" { return sample }
                }
            }
            let sample = try #require(named)
            #expect(String(decoding: sample.rendered(by: ValueText.self, namingPerson: true), as: UTF8.self) == "70.0 ann")
            #expect(String(decoding: sample.rendered(by: ValueText.self, namingPerson: false), as: UTF8.self) == "70.0")
            // Another strap is nobody's.
            _ = try store.save([try Self.heartRate(71, device: "strap-2")], from: Self.hrmd)
            let other = try await withinHangBound("strap-2's sample") { () async -> LiveSample? in
                while let event = await manager.next() {
                    if case .sample(let sample) = event, sample.device == "strap-2" { return sample }
                }
                return nil
            }
            #expect(try #require(other).person == nil)
        }
    }

    @Test("a recheck that says no ends the reader with its reason")
    func recheckEnds() async throws {
        try await Self.withFeed { _, feed, _ in
            let allowed = Mutex(true)
            let subscription = feed.subscribe(LiveReader(source: "mary/app", isManager: false, types: [.heartRate])) {
                allowed.withLock { $0 } ? nil : "the token was revoked"
            }
            allowed.withLock { $0 = false }
            let ending = try await withinHangBound("the end of the reader") {
                while let event = await subscription.next() {
                    if case .ended(let reason) = event { return reason }
                }
                return "no reason"
            }
            #expect(ending == "the token was revoked")
            try await eventually("the ended reader leaves the feed") { feed.subscriberCount == 0 }
        }
    }
}

/// A live sample as its value's text: what these tests compare.
private enum ValueText: LiveSampleRenderer {
    static func render(_ stored: StoredSample, person: String?) -> [UInt8] {
        Array("\(stored.sample.canonicalValue)\(person.map { " " + $0 } ?? "")".utf8)
    }
}
