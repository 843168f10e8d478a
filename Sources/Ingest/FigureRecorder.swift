import DailyFigures
import Foundation
import HealthModel
import HealthStore
import HealthUnits
import Logging
import Timestamps

/// hrmd's figures from the samples it stores (docs/figures.md): SDNN over each 5-minute window
/// of a strap's RR intervals, the one-minute recovery of each workout, and each wearer's resting
/// heart rate of each local day. Saved as quantity samples of source hrmd.
///
/// A figure falls due by the readings' own times, never by the clock, so a replayed recording
/// gives the figures the live run gave:
/// - an SDNN window when a strap's first RR interval past it arrives (or its recording ends);
/// - a workout's recovery when a reading of its strap reaches 65 s past its end;
/// - a day's resting heart rate when a strap's first reading of a later day arrives, or when a
///   replayed recording ends after the day did.
///
/// A strap's first reading in a run also looks back, for what fell due while hrmd was not
/// running: the day before and the workouts that ended in the day before. Recovery and resting
/// heart rate carry a sync identifier (their workout; their wearer and day), and SDNN windows
/// are identified by strap and start, so working a figure out again stores nothing new.
struct FigureRecorder {
    private let source: HealthSource
    private let calendar: Calendar
    private let logger: Logger
    /// Each strap's SDNN window in progress.
    private var windows: [String: SDNNAccumulator] = [:]
    /// Each strap's latest heart-rate reading in this run, and its device as the sample says it.
    private var latest: [String: (time: Timestamp, device: HealthDevice)] = [:]
    /// Figures worked out and not yet saved (the store was briefly unwritable), oldest first.
    private var unsaved: [QuantitySample] = []
    /// Figure types hrmd may not store, as last told (logged once per change).
    private var refused: Set<SampleType> = []

    /// At most this many figures wait for a writable store; past it the oldest go (logged).
    static let unsavedLimit = 1000
    /// How far back a strap's first reading in a run looks for figures that fell due.
    static let lookBackDays = 1
    /// How many days' resting heart rates one reading may make due at most (a strap silent
    /// for longer gets those of the days just before its reading).
    static let dueDaysLimit = 31

    init(source: HealthSource, timeZone: TimeZone = .current, logger: Logger) {
        self.source = source
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        self.calendar = calendar
        self.logger = logger
    }

    /// Takes the samples of a written batch, those of the types `stored` says were stored:
    /// works out what they complete, and saves it.
    mutating func observe(_ written: [QuantitySample], stored: (SampleType) -> Bool = { _ in true }, in store: HealthStore) {
        var beats: [String: [QuantitySample]] = [:]
        var readings: [String: (first: Timestamp, last: Timestamp, device: HealthDevice)] = [:]
        let (beatsStored, readingsStored) = (stored(.rrInterval), stored(.heartRate))
        for sample in written where sample.type == .rrInterval ? beatsStored : readingsStored {
            guard let device = sample.device else { continue }
            let id = device.localIdentifier
            if sample.type == .rrInterval {
                beats[id, default: []].append(sample)
            } else if sample.type == .heartRate {
                let known = readings[id]
                readings[id] = (min(known?.first ?? sample.start, sample.start), max(known?.last ?? sample.start, sample.start), device)
            }
        }
        for (id, samples) in beats.sorted(by: { $0.key < $1.key }) {
            var accumulator = windows[id] ?? SDNNAccumulator()
            for sample in samples.sorted(by: { $0.end < $1.end }) {
                let interval = BeatInterval(
                    start: sample.start.microsecondsSinceEpoch, end: sample.end.microsecondsSinceEpoch, milliseconds: sample.canonicalValue)
                if let window = accumulator.add(interval) { keep(Self.sample(window, device: sample.device)) }
            }
            windows[id] = accumulator
        }
        if !readings.isEmpty {
            do {
                let assignments = try store.strapAssignments()
                // Each strap's readings since its previous batch (or, first in this run, since the day before).
                let spans = readings.sorted(by: { $0.key < $1.key }).map { id, span in
                    let previous = latest[id]?.time
                    latest[id] = (max(previous ?? span.last, span.last), span.device)
                    return (after: previous ?? calendar.dayStart(of: span.first).adding(days: -Self.lookBackDays, calendar), span: span)
                }
                // The workouts whose recovery these readings may complete, read once for every strap.
                let reach = RecoveryTally.reach
                let earliest = spans.map(\.after).min()!.advanced(bySeconds: -reach)
                let ended = try store.workouts(WorkoutQuery(
                    since: earliest, until: spans.map(\.span.last).max()!.advanced(bySeconds: -reach + 0.000_001), limit: WorkoutQuery.answerLimit))
                for (after, span) in spans {
                    for day in dueDays(after: after, through: span.last) {
                        try restingHeartRates(of: day, strap: span.device, assignments: assignments, in: store)
                    }
                    try recoveries(
                        of: ended, endingAfter: after.advanced(bySeconds: -reach), through: span.last.advanced(bySeconds: -reach),
                        strap: span.device, assignments: assignments, in: store)
                }
            } catch {
                logger.warning("figures: cannot read the store's samples, workouts or assignments: \(error); these figures are not worked out")
            }
        }
        save(store)
    }

    /// The end of a replayed or imported recording: the last SDNN window of each strap, and
    /// the resting heart rate of each strap's last day when that day is over by `now`.
    mutating func finish(in store: HealthStore, now: Timestamp) {
        for (id, var accumulator) in windows.sorted(by: { $0.key < $1.key }) {
            if let window = accumulator.finish() { keep(Self.sample(window, device: latest[id]?.device ?? HealthDevice(localIdentifier: id))) }
        }
        windows = [:]
        do {
            let assignments = try store.strapAssignments()
            for (_, last) in latest.sorted(by: { $0.key < $1.key }) {
                let day = calendar.dayStart(of: last.time)
                guard day.adding(days: 1, calendar) <= now else { continue }
                try restingHeartRates(of: day, strap: last.device, assignments: assignments, in: store)
            }
        } catch {
            logger.warning("figures: cannot read the store's samples, workouts or assignments: \(error); the last day's figures are not worked out")
        }
        latest = [:]
        save(store)
    }

    // MARK: Due figures

    /// The starts of the local days that end after `after` and at or before `through`.
    private func dueDays(after: Timestamp, through: Timestamp) -> [Timestamp] {
        var days: [Timestamp] = []
        var day = calendar.dayStart(of: after)
        while true {
            let next = day.adding(days: 1, calendar)
            guard next <= through else { break }
            if next > after { days.append(day) }
            day = next
        }
        return Array(days.suffix(Self.dueDaysLimit))
    }

    /// Works out the resting heart rate of the day starting at `day` for each wearer of
    /// `strap` that day: each person who wore it (over all their straps), and the strap itself
    /// over the time nobody wore it.
    private mutating func restingHeartRates(
        of day: Timestamp, strap: HealthDevice, assignments: [StrapAssignment], in store: HealthStore
    ) throws(HealthStoreError) {
        let dayEnd = day.adding(days: 1, calendar)
        let id = strap.localIdentifier
        let people = Set(assignments.filter { $0.device == id && $0.from < dayEnd && ($0.until.map { $0 > day } ?? true) }.map(\.person))
        let now = Timestamp.now()
        let workouts = try store.workouts(WorkoutQuery(
            since: day.advanced(bySeconds: -Double(RestingHeartRate.recoveryAfterExclusion) / 1e6), until: dayEnd, limit: WorkoutQuery.answerLimit))
        for person in people.sorted() {
            let queries = assignments.queries(of: .heartRate, person: person, since: day, until: dayEnd, reader: nil)
            let exclusions = workouts.filter { $0.person == person }.map { Self.exclusion($0, now: now) }
            try restingHeartRate(of: day, dayEnd: dayEnd, wearer: "person:\(person)", queries: queries, exclusions: exclusions, in: store)
        }
        let unworn = assignments.unworn(id, since: day, until: dayEnd).map {
            SampleQuery(type: .heartRate, since: $0.since, until: $0.until, device: id)
        }
        guard !unworn.isEmpty else { return }
        let exclusions = workouts.filter { $0.person == nil && $0.device == id }.map { Self.exclusion($0, now: now) }
        try restingHeartRate(of: day, dayEnd: dayEnd, wearer: "device:\(id)", queries: unworn, exclusions: exclusions, in: store)
    }

    /// Works out one wearer's resting heart rate of one day over the samples of `queries`.
    private mutating func restingHeartRate(
        of day: Timestamp, dayEnd: Timestamp, wearer: String, queries: [SampleQuery], exclusions: [ExcludedInterval], in store: HealthStore
    ) throws(HealthStoreError) {
        let dayStart = day.microsecondsSinceEpoch
        var accumulator = RestingHeartRateAccumulator(dayStart: dayStart, dayEnd: dayEnd.microsecondsSinceEpoch, exclusions: exclusions)
        // The strap of each window's first reading: the figure's sample is its strap's.
        var windowStraps: [Int64: HealthDevice] = [:]
        var read = 0
        for query in queries {
            try store.enumerateSamples(query) { stored in
                let sample = stored.sample
                guard sample.metadata.sensorContact != false else { return }
                read += 1
                let start = sample.start.microsecondsSinceEpoch
                accumulator.add(HeartRateReading(start: start, beatsPerMinute: sample.canonicalValue))
                let window = (start - dayStart) / RestingHeartRate.windowLength
                if windowStraps[window] == nil, let device = sample.device { windowStraps[window] = device }
            }
        }
        guard read > 0 else { return }
        let date = Self.dayName(day, calendar)
        guard let figure = accumulator.finish(),
            let strap = windowStraps[(figure.windowStart - dayStart) / RestingHeartRate.windowLength]
        else {
            logger.info("figures: no resting heart rate for \(wearer) on \(date): fewer than \(RestingHeartRate.minimumQualifyingWindows) five-minute windows of rest with readings")
            return
        }
        let start = Timestamp(microsecondsSinceEpoch: figure.windowStart)
        let metadata = SampleMetadata(
            syncIdentifier: "\(HealthSource.daemonName)/resting-heart-rate/\(wearer)/\(date)", syncVersion: 1,
            extra: ["qualifyingWindows": String(figure.qualifyingWindowCount)])
        if let sample = try? QuantitySample(
            type: .restingHeartRate, quantity: Quantity(unit: .countPerMinute, doubleValue: figure.beatsPerMinute), start: start,
            end: start.advanced(bySeconds: Double(RestingHeartRate.windowLength) / 1e6), device: strap, metadata: metadata)
        {
            keep(sample)
            logger.info("figures: resting heart rate of \(wearer) on \(date): \(Int(figure.beatsPerMinute.rounded())) count/min")
        }
    }

    /// Works out the recovery of each of `workouts` of `strap`'s wearer (or of the strap) whose
    /// end lies in `(after, through]`.
    private mutating func recoveries(
        of workouts: [Workout], endingAfter after: Timestamp, through: Timestamp, strap: HealthDevice, assignments: [StrapAssignment],
        in store: HealthStore
    ) throws(HealthStoreError) {
        guard after < through else { return }
        let id = strap.localIdentifier
        let ended = workouts.filter {
            guard let end = $0.end, end > after, end <= through else { return false }
            if let person = $0.person { return assignments.person(wearing: id, at: end.advanced(bySeconds: -0.000_001)) == person }
            return $0.device == id
        }
        for workout in ended.sorted(by: { $0.start < $1.start }) {
            guard let end = workout.end else { continue }
            let since = end.advanced(bySeconds: -RecoveryTally.tolerance)
            let until = end.advanced(bySeconds: RecoveryTally.reach + 0.000_001)
            let queries = workout.person.map { assignments.queries(of: .heartRate, person: $0, since: since, until: until, reader: nil) }
                ?? [SampleQuery(type: .heartRate, since: since, until: until, device: id)]
            var tally = RecoveryTally(end: end.secondsSinceEpoch)
            for query in queries {
                try store.enumerateSamples(query) { stored in tally.add(stored.sample.canonicalValue, at: stored.sample.start.secondsSinceEpoch) }
            }
            guard let drop = tally.drop else {
                logger.info("figures: no recovery for workout \(workout.id): no reading at its end or a minute later")
                continue
            }
            let metadata = SampleMetadata(
                syncIdentifier: "\(HealthSource.daemonName)/heart-rate-recovery-one-minute/\(workout.id)", syncVersion: 1,
                extra: ["workout": workout.id])
            if let sample = try? QuantitySample(
                type: .heartRateRecoveryOneMinute, quantity: Quantity(unit: .countPerMinute, doubleValue: drop), start: end,
                end: end.advanced(bySeconds: 60), device: strap, metadata: metadata)
            {
                keep(sample)
            }
        }
    }

    // MARK: Saving

    private mutating func keep(_ sample: QuantitySample?) {
        if let sample { unsaved.append(sample) }
    }

    /// Saves the waiting figures; on a failure of the store they wait for the next batch, at
    /// most ``unsavedLimit`` of them (the oldest go first, told in one line). A figure type
    /// hrmd may not store is skipped and logged once.
    private mutating func save(_ store: HealthStore) {
        guard !unsaved.isEmpty else { return }
        do {
            let report = try store.save(unsaved, from: source)
            for (type, status) in report.authorization.sorted(by: { $0.key.storageID < $1.key.storageID }) {
                if status == .sharingAuthorized {
                    if refused.remove(type) != nil { logger.notice("figures: recording \(type.identifier) again") }
                } else if refused.insert(type).inserted {
                    logger.warning("figures: hrmd may not store \(type.identifier); grant it with: hrmctl auth grant hrmd \(type.identifier)")
                }
            }
            unsaved.removeAll()
        } catch {
            logger.warning("figures: cannot save \(unsaved.count) figures (kept for the next write): \(error)")
            if unsaved.count > Self.unsavedLimit {
                let excess = unsaved.count - Self.unsavedLimit
                unsaved.removeFirst(excess)
                logger.error("figures: dropped the \(excess) oldest unsaved figures: the store has been unwritable too long")
            }
        }
    }

    // MARK: Shapes

    /// The SDNN window's sample, of the strap whose RR intervals made it.
    static func sample(_ window: SDNNWindow, device: HealthDevice?) -> QuantitySample? {
        let start = Timestamp(microsecondsSinceEpoch: window.windowStart)
        return try? QuantitySample(
            type: .heartRateVariabilitySDNN, quantity: Quantity(unit: .millisecond, doubleValue: window.sdnnMilliseconds), start: start,
            end: start.advanced(bySeconds: Double(SDNNWindow.windowLength) / 1e6), device: device)
    }

    /// A workout's time, as the resting heart rate leaves it out.
    static func exclusion(_ workout: Workout, now: Timestamp) -> ExcludedInterval {
        ExcludedInterval(start: workout.start.microsecondsSinceEpoch, end: workout.effectiveEnd(now: now).microsecondsSinceEpoch)
    }

    /// The local day starting at `day` as `YYYY-MM-DD`.
    static func dayName(_ day: Timestamp, _ calendar: Calendar) -> String {
        let parts = calendar.dateComponents([.year, .month, .day], from: day.date)
        return String(format: "%04d-%02d-%02d", parts.year ?? 0, parts.month ?? 0, parts.day ?? 0)
    }
}

extension Timestamp {
    /// The same instant as a Foundation date.
    fileprivate var date: Date { Date(timeIntervalSince1970: secondsSinceEpoch) }

    /// The instant `days` local days later by `calendar` (a day lasts 23 to 25 hours where
    /// the zone changes its offset).
    fileprivate func adding(days: Int, _ calendar: Calendar) -> Timestamp {
        Timestamp(secondsSinceEpoch: (calendar.date(byAdding: .day, value: days, to: date) ?? date).timeIntervalSince1970)
    }
}

extension Calendar {
    /// The start of the local day holding `time`.
    fileprivate func dayStart(of time: Timestamp) -> Timestamp {
        Timestamp(secondsSinceEpoch: startOfDay(for: time.date).timeIntervalSince1970)
    }
}
