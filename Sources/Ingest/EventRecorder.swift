import Foundation
import HealthModel
import HealthStore
import HeartRateEvents
import Logging
import Timestamps

/// hrmd's events from the samples it stores: one ``EventDetector`` and one ``BatteryWatch``
/// per strap, fed each written batch in time order, with whether each reading falls in a
/// workout of its wearer (or of the strap, when nobody wears it) and who wore the strap. What
/// they open, extend and close is saved as ``HealthEvent``s of source hrmd.
///
/// The same readings give the same events live and replayed: an event's id is made from its
/// type, strap and start, and saving what is stored already changes nothing, so a recording
/// imported twice, or replayed after the live run, stores each event once. Events that were
/// open when hrmd stopped are continued by the next reading of their strap, or closed at the
/// end of the last reading they covered.
struct EventRecorder {
    /// The rules of `[alerts]`; a person's own thresholds (`hrmctl person set --alert-high`)
    /// override them while their strap is theirs.
    let rules: AlertRules
    private let logger: Logger
    private var detectors: [String: EventDetector] = [:]
    private var batteries: [String: BatteryWatch] = [:]
    /// Each strap's link: down since when, and the disconnected event it has open.
    private var links: [String: LinkWatch] = [:]
    /// The battery level last fed per strap (a watch is told of changes only).
    private var batteryLevels: [String: Int] = [:]
    /// Each open event's stored form, by strap and kind: its id and person stay.
    private var open: [OpenKey: HealthEvent] = [:]
    /// Events detected and not yet saved (the store was briefly unwritable), oldest first.
    private var unsaved: [HealthEvent] = []
    /// Whether the open events of an earlier run were read.
    private var resumed = false
    /// Event types hrmd may not store, as last told (logged once per change).
    private var refused: Set<SampleType> = []
    /// People whose own thresholds make rules that do not hold (a low above the configured
    /// high, say), as last told: their readings follow `[alerts]`.
    private var unusableRules: Set<String> = []

    /// At most this many events wait for a writable store; past it the oldest go (logged).
    static let unsavedLimit = 1000

    private struct OpenKey: Hashable {
        var device: String
        var kind: EventKind
    }

    init(rules: AlertRules, logger: Logger) {
        self.rules = rules
        self.logger = logger
    }

    /// Feeds the heart-rate samples of a written batch, the readings skipped for want of skin
    /// contact (`contactLost`: no sample, only the strap and the time), and the straps'
    /// battery levels to the detectors, and saves what changed.
    mutating func observe(
        _ samples: [QuantitySample], contactLost: [ContactLostReading], batteryLevels levels: (String) -> Int?, in store: HealthStore
    ) {
        var byDevice: [String: [EventReading]] = [:]
        for sample in samples where sample.type == .heartRate {
            guard let device = sample.device?.localIdentifier else { continue }
            byDevice[device, default: []].append(
                EventReading(start: sample.start, end: sample.end, heartRate: sample.canonicalValue, contact: sample.metadata.sensorContact))
        }
        for reading in contactLost {
            byDevice[reading.device, default: []].append(EventReading(start: reading.time, end: reading.time, heartRate: nil, contact: false))
        }
        guard !byDevice.isEmpty || !unsaved.isEmpty else { return }
        do {
            try resumeIfNeeded(store)
            if !byDevice.isEmpty {
                let context = try ReadingContext(byDevice.values.flatMap { $0 }, store: store)
                for (device, readings) in byDevice.sorted(by: { $0.key < $1.key }) {
                    var detector = detectors[device] ?? EventDetector(rules: rules)
                    // In time order; at one time a sample before a reading without contact.
                    for reading in readings.enumerated().sorted(by: { ($0.element.start, $0.offset) < ($1.element.start, $1.offset) }) {
                        let start = reading.element.start
                        // Another wearer's thresholds: what the last ones found ends with their readings.
                        let wanted = rules(for: context.person(wearing: device, at: start), context.people)
                        if wanted != detector.rules {
                            take(detector.finish(), device: device, context: context)
                            detector = EventDetector(rules: wanted)
                        }
                        let judged = EventReading(
                            start: start, end: reading.element.end, heartRate: reading.element.heartRate,
                            contact: reading.element.contact, insideWorkout: context.insideWorkout(device: device, at: start))
                        take(detector.add(judged), device: device, context: context)
                    }
                    detectors[device] = detector
                    keepLatest(of: detector.openEvents, device: device, after: Self.latestIntervalMicroseconds)
                    if let level = levels(device), batteryLevels[device] != level, let last = readings.map(\.end).max() {
                        batteryLevels[device] = level
                        var watch = batteries[device] ?? BatteryWatch(rules: rules)
                        take(watch.add(level: level, at: last), device: device, context: context)
                        batteries[device] = watch
                    }
                }
            }
        } catch {
            logger.warning("events: cannot read the store's workouts, assignments or open events: \(error); these readings make no events")
        }
        save(store)
    }

    /// Saves each open event's latest reading (hrmd stops: the next run continues from there).
    mutating func keepOpen(in store: HealthStore) {
        for (device, detector) in detectors.sorted(by: { $0.key < $1.key }) {
            keepLatest(of: detector.openEvents, device: device, after: 0)
        }
        save(store)
    }

    /// Takes a strap's link going down (`up` false) or the strap heard (a connection or any
    /// frame, `up` true) at `time`, and saves what it opens or closes. Cheap for a strap whose
    /// link is up: most frames only look it up.
    mutating func link(_ device: String, up: Bool, at time: Timestamp, in store: HealthStore) {
        if up, resumed, links[device]?.isWatching != true { return }
        do {
            try resumeIfNeeded(store)
        } catch {
            logger.warning("events: cannot read the store's open events: \(error); the strap's link makes no events")
            return
        }
        var watch = links[device] ?? LinkWatch(rules: rules)
        let updates = up ? watch.heard(at: time) : watch.disconnected(at: time)
        links[device] = watch.isWatching ? watch : nil
        guard !updates.isEmpty else { return }
        take(updates, device: device, context: try? ReadingContext([EventReading(start: time, end: time, heartRate: nil, contact: nil)], store: store))
        save(store)
    }

    /// The time is `now` (live only): opens the disconnected events of links down long enough.
    mutating func tick(now: Timestamp, in store: HealthStore) {
        var opened = false
        for (device, var watch) in links.sorted(by: { $0.key < $1.key }) {
            let updates = watch.tick(now: now)
            links[device] = watch
            guard let first = updates.first else { continue }
            let start = first.event.start
            take(updates, device: device, context: try? ReadingContext([EventReading(start: start, end: start, heartRate: nil, contact: nil)], store: store))
            opened = true
        }
        if opened { save(store) }
    }

    /// How far an open event's latest reading may run ahead of the stored one before it is
    /// saved again (besides its opening, a new extreme, its end and hrmd's stop): what a
    /// crash can cost the next run's view of where the event had got to.
    static let latestIntervalMicroseconds: Int64 = 10_000_000

    /// Queues the open events of `device` whose latest reading is more than `micros`
    /// microseconds past the stored one.
    private mutating func keepLatest(of events: [DetectedEvent], device: String, after micros: Int64) {
        for detected in events {
            let key = OpenKey(device: device, kind: detected.kind)
            guard var stored = open[key], stored.start == detected.start,
                detected.lastEnd.microsecondsSinceEpoch > stored.latest.microsecondsSinceEpoch + micros
            else { continue }
            stored.latest = detected.lastEnd
            stored.extreme = detected.extreme
            open[key] = stored
            unsaved.append(stored)
        }
    }

    /// Closes every open event at the end of its last reading: the end of a replayed or
    /// imported recording.
    mutating func finish(in store: HealthStore) {
        for (device, var detector) in detectors.sorted(by: { $0.key < $1.key }) {
            take(detector.finish(), device: device, context: nil)
        }
        for (device, var watch) in batteries.sorted(by: { $0.key < $1.key }) {
            take(watch.finish(), device: device, context: nil)
        }
        for (device, var watch) in links.sorted(by: { $0.key < $1.key }) {
            take(watch.finish(), device: device, context: nil)
            links[device] = watch.isWatching ? watch : nil
        }
        detectors = [:]
        batteries = [:]
        save(store)
    }

    /// Turns a detector's updates into events to save.
    private mutating func take(_ updates: [EventUpdate], device: String, context: ReadingContext?) {
        for update in updates {
            let detected = update.event
            let key = OpenKey(device: device, kind: detected.kind)
            let type = Self.type(of: detected.kind)
            let known = open[key].flatMap { $0.start == detected.start ? $0 : nil }
            // An update's end so far can be older than what was saved since (the detector sends
            // `extended` only when the extreme moves): an open event's latest never goes back.
            let latest = detected.end ?? max(detected.lastEnd, known?.latest ?? detected.lastEnd)
            let event = HealthEvent(
                id: known?.id ?? Self.id(type: type, device: device, start: detected.start), type: type, source: HealthSource.eventWriter,
                device: device, person: known?.person ?? context?.person(wearing: device, at: detected.start), start: detected.start,
                end: detected.end, latest: latest, threshold: detected.threshold, extreme: detected.extreme)
            open[key] = event.isOpen ? event : nil
            unsaved.append(event)
        }
    }

    /// Saves the waiting events in order in one transaction, each in the state its last change
    /// left it (an event opened and ended since the last save is saved once, ended). When the
    /// store itself fails they wait for the next batch, at most ``unsavedLimit`` of them (the
    /// oldest go first, told in one line). An event type hrmd may not store is skipped and
    /// logged once; an event the store refuses is left out and logged.
    private mutating func save(_ store: HealthStore) {
        unsaved = Self.latestOfEach(unsaved)
        var saved = 0
        defer {
            unsaved.removeFirst(saved)
            if unsaved.count > Self.unsavedLimit {
                let excess = unsaved.count - Self.unsavedLimit
                unsaved.removeFirst(excess)
                logger.error("events: dropped the \(excess) oldest unsaved event changes: the store has been unwritable too long")
            }
        }
        let outcomes: [Result<Void, HealthStoreError>]
        do {
            outcomes = try store.saveEvents(unsaved)
        } catch {
            logger.warning("events: cannot save \(unsaved.count) event changes (kept for the next write): \(error)")
            return
        }
        saved = unsaved.count
        for (event, outcome) in zip(unsaved, outcomes) {
            switch outcome {
            case .success:
                if refused.remove(event.type) != nil { logger.notice("events: recording \(event.type.identifier) events again") }
            case .failure(.shareNotAuthorized):
                if refused.insert(event.type).inserted {
                    logger.warning(
                        "events: hrmd may not store \(event.type.identifier); grant it with: hrmctl auth grant hrmd \(event.type.identifier)")
                }
            case .failure(let refusal):
                // Not the store failing but this event refused (it conflicts with one stored):
                // kept, it would hold back every later one.
                logger.warning("events: the store refused an event change, left out: \(refusal)")
            }
        }
    }

    /// `events` with each event (by id) only in its last state, at the place of that state.
    static func latestOfEach(_ events: [HealthEvent]) -> [HealthEvent] {
        var last: [String: Int] = [:]
        for (index, event) in events.enumerated() { last[event.id] = index }
        guard last.count < events.count else { return events }
        return events.enumerated().compactMap { last[$0.element.id] == $0.offset ? $0.element : nil }
    }

    /// Reads the events hrmd left open and continues them.
    private mutating func resumeIfNeeded(_ store: HealthStore) throws(HealthStoreError) {
        guard !resumed else { return }
        let stored = try store.events(EventQuery(openOnly: true, reader: HealthSource.eventWriter))
        let people = try Self.peopleByName(store)
        var byDevice: [String: [DetectedEvent]] = [:]
        var wearers: [String: String] = [:]
        for event in stored where event.source == HealthSource.eventWriter {
            guard let device = event.device, let kind = Self.kind(of: event.type) else { continue }
            open[OpenKey(device: device, kind: kind)] = event
            let detected = DetectedEvent(
                kind: kind, start: event.start, end: nil, lastEnd: event.latest, threshold: event.threshold, extreme: event.extreme)
            if kind == .batteryLow {
                batteries[device] = BatteryWatch(rules: rules, resuming: detected)
            } else if kind == .disconnected {
                links[device] = LinkWatch(rules: rules, resuming: detected)
            } else {
                byDevice[device, default: []].append(detected)
                if let person = event.person { wearers[device] = person }
            }
        }
        for (device, events) in byDevice {
            detectors[device] = EventDetector(rules: rules(for: wearers[device], people), resuming: events)
        }
        if !stored.isEmpty { logger.info("events: continuing \(stored.count) open events") }
        resumed = true
    }

    /// The rules for readings of `person`'s: `[alerts]` with their own thresholds.
    private mutating func rules(for person: String?, _ people: [String: Person]) -> AlertRules {
        guard let person, let record = people[person], record.alertHigh != nil || record.alertLow != nil else { return rules }
        let own = rules.overriding(high: record.alertHigh, low: record.alertLow)
        if let problem = own.problem() {
            if unusableRules.insert(person).inserted {
                logger.warning("events: \(person)'s own alert thresholds with [alerts] do not hold (\(problem)); their readings follow [alerts]")
            }
            return rules
        }
        unusableRules.remove(person)
        return own
    }

    /// The store's people by name (names are unique).
    static func peopleByName(_ store: HealthStore) throws(HealthStoreError) -> [String: Person] {
        Dictionary(uniqueKeysWithValues: try store.people().map { ($0.name, $0) })
    }

    static func type(of kind: EventKind) -> SampleType {
        switch kind {
        case .high: .highHeartRateEvent
        case .low: .lowHeartRateEvent
        case .contactLost: .sensorContactLost
        case .batteryLow: .strapBatteryLow
        case .disconnected: .strapDisconnected
        }
    }

    static func kind(of type: SampleType) -> EventKind? {
        EventKind.allCases.first { Self.type(of: $0) == type }
    }

    /// The id of the event of `type` on `device` starting at `start`: the same every time the
    /// same readings are seen, shaped as a UUID (two FNV-1a hashes of the three).
    static func id(type: SampleType, device: String, start: Timestamp) -> String {
        let name = Array("\(type.identifier)|\(device)|\(start.microsecondsSinceEpoch)".utf8)
        func fnv(_ basis: UInt64) -> UInt64 {
            var hash = basis
            for byte in name {
                hash ^= UInt64(byte)
                hash &*= 0x100_0000_01b3
            }
            return hash
        }
        let characters = Array(String(format: "%016llx%016llx", fnv(0xcbf2_9ce4_8422_2325), fnv(0x8422_2325_cbf2_9ce4)))
        return [0..<8, 8..<12, 12..<16, 16..<20, 20..<32].map { String(characters[$0]) }.joined(separator: "-")
    }
}

/// A reading skipped because the strap said it had no skin contact: no sample, but a moment
/// of contact lost.
struct ContactLostReading {
    var device: String
    var time: Timestamp
}

/// What a batch's readings are judged with: the workouts over its time and who wore which strap.
private struct ReadingContext {
    let workouts: [Workout]
    let assignments: [StrapAssignment]
    /// People by name: their own thresholds.
    let people: [String: Person]

    init(_ readings: [EventReading], store: HealthStore) throws(HealthStoreError) {
        let since = readings.map(\.start).min()!
        let until = readings.map(\.end).max()!.advanced(bySeconds: 0.000_001)
        workouts = try store.workouts(WorkoutQuery(since: since, until: until, limit: WorkoutQuery.answerLimit))
        assignments = try store.strapAssignments()
        people = try EventRecorder.peopleByName(store)
    }

    func person(wearing device: String, at time: Timestamp) -> String? { assignments.person(wearing: device, at: time) }

    /// Whether `time` falls in a workout of the strap's wearer then, or of the strap itself
    /// when it is nobody's.
    func insideWorkout(device: String, at time: Timestamp) -> Bool {
        let person = person(wearing: device, at: time)
        return workouts.contains { workout in
            guard workout.start <= time, workout.end.map({ time < $0 }) ?? true else { return false }
            if let owner = workout.person { return owner == person }
            return workout.device == device
        }
    }
}
