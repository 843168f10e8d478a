import HeartRateEvents
import Testing
import Timestamps

/// The detector against the batch definition (ReferenceEvents) on seeded random sequences,
/// whole and split by restarts.
@Suite("Event detection matches the definition")
struct EventDetectorPropertyTests {
    static let sequenceCount: UInt64 = 3000

    /// One update, and the index of the reading whose `add` returned it.
    struct Logged {
        var index: Int
        var update: EventUpdate
    }

    /// What a detector reported over a whole list: every update, by the index of the reading
    /// whose `add` returned it (`readings.count` for `finish()`).
    struct Run {
        var updates: [Logged] = []
        var skippedOutOfOrder = 0

        /// The closed events, ordered by kind then start.
        var closedEvents: [DetectedEvent] {
            updates.compactMap { if case .closed(let event) = $0.update { event } else { nil } }.sorted(by: Self.order)
        }

        static func order(_ a: DetectedEvent, _ b: DetectedEvent) -> Bool {
            let kinds = EventKind.allCases
            let (kindA, kindB) = (kinds.firstIndex(of: a.kind) ?? 0, kinds.firstIndex(of: b.kind) ?? 0)
            return kindA != kindB ? kindA < kindB : a.start < b.start
        }
    }

    /// Runs one detector over `readings`, restarting it before each index in `restarts`
    /// (resuming its open events and, when `withPendingRuns`, its pending runs).
    static func detect(
        _ readings: [EventReading], rules: AlertRules, restarts: Set<Int> = [], withPendingRuns: Bool = true
    ) -> Run {
        var detector = EventDetector(rules: rules)
        var run = Run()
        var skippedBefore = 0
        for (index, reading) in readings.enumerated() {
            if restarts.contains(index) {
                skippedBefore += detector.skippedOutOfOrder
                detector = EventDetector(rules: rules, resuming: detector.openEvents, pendingRuns: withPendingRuns ? detector.pendingRuns : [])
            }
            run.updates += detector.add(reading).map { Logged(index: index, update: $0) }
        }
        run.updates += detector.finish().map { Logged(index: readings.count, update: $0) }
        run.skippedOutOfOrder = skippedBefore + detector.skippedOutOfOrder
        return run
    }

    /// An event opened, and the reading whose `add` reported it.
    struct Opening: Hashable {
        var kind: EventKind
        var start: Timestamp
        var readingIndex: Int
    }

    @Test("the detector finds exactly the events of the definition, each opened by the reading that makes it last long enough")
    func matchesReference() {
        var eventCount = 0
        var kindsSeen: Set<EventKind> = []
        for seed in 0..<Self.sequenceCount {
            var generator = SplitMix64(seed: seed)
            let rules = RandomReadings.rules(using: &generator)
            let readings = RandomReadings.readings(rules: rules, outOfOrder: true, using: &generator)
            let expected = ReferenceEvents.events(in: readings, rules: rules)
            let run = Self.detect(readings, rules: rules)
            #expect(run.closedEvents == expected.map(\.event).sorted(by: Run.order), "seed \(seed)")
            let opened = run.updates.compactMap { entry -> Opening? in
                guard case .opened(let event) = entry.update else { return nil }
                return Opening(kind: event.kind, start: event.start, readingIndex: entry.index)
            }
            let expectedOpenings = expected.map { Opening(kind: $0.event.kind, start: $0.event.start, readingIndex: $0.openedBy) }
            #expect(Set(opened) == Set(expectedOpenings) && opened.count == expectedOpenings.count, "seed \(seed): opened by another reading")
            var latestStart = Timestamp(microsecondsSinceEpoch: .min)
            let outOfOrder = readings.filter { reading in
                defer { latestStart = max(latestStart, reading.start) }
                return reading.start < latestStart
            }
            #expect(run.skippedOutOfOrder == outOfOrder.count, "seed \(seed)")
            checkUpdateStream(run, rules: rules, seed: seed)
            eventCount += expected.count
            kindsSeen.formUnion(expected.map(\.event.kind))
        }
        // The sequences must exercise the detector, or the comparison proves little.
        #expect(eventCount > Int(Self.sequenceCount), "only \(eventCount) events in all")
        #expect(kindsSeen == [.high, .low, .contactLost])
    }

    /// Each event is opened once, extended only when its extreme moves the right way, closed
    /// once with the extreme it last reported; contact lost is never extended.
    private func checkUpdateStream(_ run: Run, rules: AlertRules, seed: UInt64) {
        var open: [EventKind: DetectedEvent] = [:]
        for update in run.updates.map(\.update) {
            let event = update.event
            switch update {
            case .opened:
                #expect(open[event.kind] == nil && event.isOpen, "seed \(seed): \(update)")
                open[event.kind] = event
            case .extended:
                let before = open[event.kind]
                #expect(event.kind != .contactLost && before?.start == event.start && event.isOpen, "seed \(seed): \(update)")
                if let old = before?.extreme, let new = event.extreme {
                    #expect(event.kind == .high ? new > old : new < old, "seed \(seed): \(update) after \(old)")
                }
                open[event.kind] = event
            case .closed:
                #expect(open[event.kind]?.start == event.start && open[event.kind]?.extreme == event.extreme, "seed \(seed): \(update)")
                #expect(event.end == event.lastEnd && event.end != nil)
                open[event.kind] = nil
            }
        }
        #expect(open.isEmpty, "seed \(seed): left open after finish()")
    }

    @Test("restarts anywhere, resuming open events and pending runs, change no update")
    func restartsAnywhere() {
        var restartCount = 0
        for seed in 0..<Self.sequenceCount {
            var generator = SplitMix64(seed: seed &+ 1_000_000)
            let rules = RandomReadings.rules(using: &generator)
            let readings = RandomReadings.readings(rules: rules, outOfOrder: false, using: &generator)
            guard !readings.isEmpty else { continue }
            let restarts = Set((0...generator.below(4)).map { _ in generator.below(readings.count) })
            restartCount += restarts.count
            let whole = Self.detect(readings, rules: rules)
            let split = Self.detect(readings, rules: rules, restarts: restarts)
            #expect(split.updates.map(\.update) == whole.updates.map(\.update), "seed \(seed), restarts before \(restarts.sorted())")
            #expect(split.updates.map(\.index) == whole.updates.map(\.index), "seed \(seed)")
        }
        #expect(restartCount > Int(Self.sequenceCount))
    }

    /// What the store knows of an open event from its updates: all but the end so far.
    struct OpenEventKey: Hashable {
        var kind: EventKind
        var start: Timestamp
        var threshold: Double?
        var extreme: Double?

        init(_ event: DetectedEvent) {
            (kind, start, threshold, extreme) = (event.kind, event.start, event.threshold, event.extreme)
        }
    }

    @Test("restarts that resume only the stored open events change nothing where no shorter run was in progress")
    func restartsWithOpenEventsOnly() {
        var restartCount = 0
        for seed in 0..<Self.sequenceCount / 3 {
            var generator = SplitMix64(seed: seed &+ 2_000_000)
            let rules = RandomReadings.rules(using: &generator)
            let readings = RandomReadings.readings(rules: rules, outOfOrder: false, using: &generator)
            // Where a detector run straight through has no pending run, and the open events the
            // updates so far describe match its open events (end so far aside).
            var detector = EventDetector(rules: rules)
            var storedOpen: [EventKind: DetectedEvent] = [:]
            var quietPoints: [Int] = []
            for (index, reading) in readings.enumerated() {
                if detector.pendingRuns.isEmpty { quietPoints.append(index) }
                for update in detector.add(reading) {
                    switch update {
                    case .opened(let event), .extended(let event): storedOpen[event.kind] = event
                    case .closed(let event): storedOpen[event.kind] = nil
                    }
                }
                let fromUpdates = EventKind.allCases.compactMap { storedOpen[$0].map(OpenEventKey.init) }
                let fromDetector = detector.openEvents.map(OpenEventKey.init)
                if fromUpdates != fromDetector { Issue.record("seed \(seed) at \(index): \(fromUpdates) from the updates, \(fromDetector) open") }
            }
            guard !quietPoints.isEmpty else { continue }
            let restart = generator.pick(quietPoints)
            restartCount += 1
            let whole = Self.detect(readings, rules: rules)
            let split = Self.detect(readings, rules: rules, restarts: [restart], withPendingRuns: false)
            #expect(split.updates.map(\.update) == whole.updates.map(\.update), "seed \(seed), restart before \(restart)")
        }
        #expect(restartCount > Int(Self.sequenceCount) / 6)
    }
}
