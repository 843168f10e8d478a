import HeartRateEvents
import Testing
import Timestamps

/// The rules of the edge cases: above 120 or below 40 for 10 s, no contact for 5 s.
private let rules = AlertRules(high: 120, highFor: .seconds(10), low: 40, lowFor: .seconds(10), contactLostFor: .seconds(5), batteryLow: 10)

/// The time `microseconds` after RandomReadings.origin.
private func at(_ microseconds: Int64) -> Timestamp { Timestamp(microsecondsSinceEpoch: RandomReadings.origin + microseconds) }

/// Microseconds in `seconds`.
private func s(_ seconds: Int64) -> Int64 { seconds * 1_000_000 }

/// A reading from `start` to `end` (microseconds after the origin).
private func reading(_ start: Int64, _ end: Int64, bpm: Double?, contact: Bool? = true, workout: Bool = false) -> EventReading {
    EventReading(start: at(start), end: at(end), heartRate: bpm, contact: contact, insideWorkout: workout)
}

/// One-second readings from `from` to `to` seconds, all at `bpm`.
private func seconds(_ from: Int64, _ to: Int64, bpm: Double?, contact: Bool? = true) -> [EventReading] {
    (from..<to).map { reading(s($0), s($0 + 1), bpm: bpm, contact: contact) }
}

/// Every update of a detector that takes `readings` then finishes.
private func updates(_ readings: [EventReading]) -> [EventUpdate] {
    var detector = EventDetector(rules: rules)
    return readings.flatMap { detector.add($0) } + detector.finish()
}

/// The closed events of `readings`.
private func events(_ readings: [EventReading]) -> [DetectedEvent] {
    updates(readings).compactMap { if case .closed(let event) = $0 { event } else { nil } }
}

/// A closed event of the edge-case rules.
private func event(_ kind: EventKind, _ start: Int64, _ end: Int64, extreme: Double? = nil) -> DetectedEvent {
    let threshold: Double? = kind == .high ? 120 : kind == .low ? 40 : nil
    return DetectedEvent(kind: kind, start: at(start), end: at(end), lastEnd: at(end), threshold: threshold, extreme: extreme)
}

@Suite("Event detection at the edges")
struct EventDetectorEdgeCaseTests {
    @Test("a value exactly at the threshold is neither above nor below it")
    func exactlyAtThreshold() {
        #expect(events(seconds(0, 30, bpm: 120)).isEmpty)
        #expect(events(seconds(0, 30, bpm: 40)).isEmpty)
        #expect(events(seconds(0, 30, bpm: 120.001)) == [event(.high, 0, s(30), extreme: 120.001)])
        #expect(events(seconds(0, 30, bpm: 39.999)) == [event(.low, 0, s(30), extreme: 39.999)])
    }

    @Test("flapping around a threshold never lasts long enough")
    func flapping() {
        let aroundHigh = (0..<600).map { reading(s($0), s($0 + 1), bpm: $0 % 2 == 0 ? 121 : 119) }
        let aroundLow = (0..<600).map { reading(s($0), s($0 + 1), bpm: $0 % 2 == 0 ? 39 : 40) }
        let contactFlapping = (0..<600).map { reading(s($0), s($0 + 1), bpm: 70, contact: $0 % 5 == 4) }
        #expect(updates(aroundHigh).isEmpty)
        #expect(updates(aroundLow).isEmpty)
        #expect(updates(contactFlapping).isEmpty, "4 s without contact, then 1 s with, again and again")
    }

    @Test("a gap of exactly the duration continues a run; one microsecond more ends it")
    func gapAtAndOverDuration() {
        let joined = [reading(0, s(6), bpm: 130), reading(s(16), s(17), bpm: 140)]
        #expect(events(joined) == [event(.high, 0, s(17), extreme: 140)])
        let parted = [reading(0, s(6), bpm: 130), reading(s(16) + 1, s(17), bpm: 140)]
        #expect(events(parted).isEmpty)
        let lost = [reading(0, s(3), bpm: nil, contact: false), reading(s(8), s(9), bpm: nil, contact: false)]
        #expect(events(lost) == [event(.contactLost, 0, s(9))])
        let lostParted = [reading(0, s(3), bpm: nil, contact: false), reading(s(8) + 1, s(9), bpm: nil, contact: false)]
        #expect(events(lostParted).isEmpty)
    }

    @Test("a run shorter than the duration by 1 µs is nothing; at the duration it opens with its last reading")
    func oneMicrosecondShort() {
        #expect(events(seconds(0, 9, bpm: 130) + [reading(s(9), s(10) - 1, bpm: 130)]).isEmpty)
        var detector = EventDetector(rules: rules)
        for reading in seconds(0, 9, bpm: 130) { #expect(detector.add(reading).isEmpty) }
        let opened = DetectedEvent(kind: .high, start: at(0), end: nil, lastEnd: at(s(10)), threshold: 120, extreme: 130)
        #expect(detector.add(reading(s(9), s(10), bpm: 130)) == [.opened(opened)])
        #expect(detector.openEvents == [opened] && detector.pendingRuns.isEmpty)
    }

    @Test("entering a workout ends a run, and the workout's readings belong to none")
    func workoutEndsRun() {
        var detector = EventDetector(rules: rules)
        for reading in seconds(0, 15, bpm: 130, contact: false) { _ = detector.add(reading) }
        let closing = detector.add(reading(s(15), s(16), bpm: 180, contact: false, workout: true))
        #expect(closing == [.closed(event(.high, 0, s(15), extreme: 130)), .closed(event(.contactLost, 0, s(15)))])
        #expect(detector.openEvents.isEmpty && detector.pendingRuns.isEmpty)
        let workout = (16..<100).map { reading(s($0), s($0 + 1), bpm: 180, contact: false, workout: true) }
        #expect(workout.flatMap { detector.add($0) }.isEmpty)
        #expect(detector.finish().isEmpty)
    }

    @Test("two runs separated by a workout are two events")
    func runsSeparatedByWorkout() {
        let readings = seconds(0, 12, bpm: 130) + [reading(s(12), s(13), bpm: 130, workout: true)] + seconds(13, 30, bpm: 150)
        #expect(events(readings) == [event(.high, 0, s(12), extreme: 130), event(.high, s(13), s(30), extreme: 150)])
        let withoutHeartRate = seconds(0, 12, bpm: 130) + [reading(s(12), s(13), bpm: nil, workout: true)] + seconds(13, 30, bpm: 150)
        #expect(events(withoutHeartRate) == events(readings), "a workout ends runs even in a reading without heart rate")
    }

    @Test("readings without a heart rate neither continue nor end high and low runs")
    func missingHeartRate() {
        let readings = [reading(0, s(6), bpm: 130), reading(s(6), s(7), bpm: nil), reading(s(7), s(11), bpm: 135)]
        #expect(events(readings) == [event(.high, 0, s(11), extreme: 135)])
        let tooFarApart = [reading(0, s(6), bpm: 130), reading(s(6), s(20), bpm: nil), reading(s(20), s(24), bpm: 135)]
        #expect(events(tooFarApart).isEmpty, "the gap counts from the last reading with a heart rate")
    }

    @Test("contact not reported ends a contact-lost run")
    func contactNotReported() {
        let readings = seconds(0, 3, bpm: nil, contact: false) + seconds(3, 4, bpm: nil, contact: nil) + seconds(4, 8, bpm: nil, contact: false)
        #expect(events(readings).isEmpty)
        #expect(events(seconds(0, 8, bpm: nil, contact: false)) == [event(.contactLost, 0, s(8))])
    }

    @Test("high and low carry their threshold and extreme, extended only when the extreme moves")
    func extremes() {
        let rates: [Double] = [130, 150, 140, 150, 135, 150, 160, 165, 125]
        let high = updates(rates.enumerated().map { reading(s(Int64($0.offset) * 2), s(Int64($0.offset) * 2 + 2), bpm: $0.element) })
        let open = { (end: Int64, extreme: Double) in DetectedEvent(kind: .high, start: at(0), end: nil, lastEnd: at(end), threshold: 120, extreme: extreme) }
        #expect(high == [.opened(open(s(10), 150)), .extended(open(s(14), 160)), .extended(open(s(16), 165)), .closed(event(.high, 0, s(18), extreme: 165))])
        let low = events([35, 30, 38, 20, 39].enumerated().map { reading(s(Int64($0.offset) * 3), s(Int64($0.offset) * 3 + 3), bpm: $0.element) })
        #expect(low == [event(.low, 0, s(15), extreme: 20)])
        let lost = updates(seconds(0, 20, bpm: nil, contact: false))
        #expect(lost.count == 2 && lost.allSatisfy { $0.event.threshold == nil && $0.event.extreme == nil })
    }

    @Test("readings that start before the previous one are skipped and counted")
    func outOfOrder() {
        var detector = EventDetector(rules: rules)
        _ = detector.add(reading(s(5), s(6), bpm: 130))
        #expect(detector.add(reading(s(4), s(20), bpm: 130)).isEmpty)
        _ = detector.add(reading(s(5), s(6), bpm: 130))
        #expect(detector.skippedOutOfOrder == 1)
        #expect(detector.pendingRuns.map(\.lastEnd) == [at(s(6))])
    }

    @Test("expire() closes a run only after more than its duration of silence")
    func expire() {
        var detector = EventDetector(rules: rules)
        for reading in seconds(0, 15, bpm: 130) { _ = detector.add(reading) }
        #expect(detector.expire(at: at(s(25))).isEmpty)
        #expect(detector.openEvents.count == 1)
        #expect(detector.expire(at: at(s(25) + 1)) == [.closed(event(.high, 0, s(15), extreme: 130))])
        #expect(detector.openEvents.isEmpty && detector.expire(at: at(s(100))).isEmpty)
        for reading in seconds(100, 104, bpm: nil, contact: false) { _ = detector.add(reading) }
        #expect(detector.pendingRuns.count == 1)
        #expect(detector.expire(at: at(s(109))).isEmpty && detector.pendingRuns.count == 1)
        #expect(detector.expire(at: at(s(109) + 1)).isEmpty, "a run that never lasted its duration goes silently")
        #expect(detector.pendingRuns.isEmpty)
        #expect(events(seconds(200, 210, bpm: 130)).count == 1)
    }

    @Test("finish() closes open events at their last reading's end and drops shorter runs")
    func finish() {
        var detector = EventDetector(rules: rules)
        for reading in seconds(0, 15, bpm: 130, contact: true) + seconds(15, 18, bpm: 130, contact: false) { _ = detector.add(reading) }
        #expect(detector.finish() == [.closed(event(.high, 0, s(18), extreme: 130))])
        #expect(detector.openEvents.isEmpty && detector.pendingRuns.isEmpty)
        #expect(detector.finish().isEmpty)
    }

    @Test("a resumed open event continues without a second opened, else closes at its stored end")
    func resuming() {
        let stored = DetectedEvent(kind: .high, start: at(0), end: nil, lastEnd: at(s(15)), threshold: 120, extreme: 140)
        func resumed(_ next: EventReading) -> (next: [EventUpdate], finish: [EventUpdate]) {
            var detector = EventDetector(rules: rules, resuming: [stored])
            return (detector.add(next), detector.finish())
        }
        let continued = resumed(reading(s(25), s(26), bpm: 130))
        #expect(continued.next.isEmpty)
        #expect(continued.finish == [.closed(event(.high, 0, s(26), extreme: 140))])
        let higher = resumed(reading(s(16), s(17), bpm: 150))
        #expect(higher.next == [.extended(DetectedEvent(kind: .high, start: at(0), end: nil, lastEnd: at(s(17)), threshold: 120, extreme: 150))])
        let normal = resumed(reading(s(16), s(17), bpm: 100))
        #expect(normal.next == [.closed(event(.high, 0, s(15), extreme: 140))] && normal.finish.isEmpty)
        let late = resumed(reading(s(25) + 1, s(26), bpm: 130))
        #expect(late.next == [.closed(event(.high, 0, s(15), extreme: 140))] && late.finish.isEmpty)
        let workout = resumed(reading(s(16), s(17), bpm: 130, workout: true))
        #expect(workout.next == [.closed(event(.high, 0, s(15), extreme: 140))])
        var silent = EventDetector(rules: rules, resuming: [stored])
        #expect(silent.expire(at: at(s(25) + 1)) == [.closed(event(.high, 0, s(15), extreme: 140))])
    }

    @Test("a resumed pending run opens once it lasts its duration; what is not the detector's is left out")
    func resumingPending() {
        let pending = DetectedEvent(kind: .contactLost, start: at(0), end: nil, lastEnd: at(s(3)), threshold: nil, extreme: nil)
        let battery = DetectedEvent(kind: .batteryLow, start: at(0), end: nil, lastEnd: at(s(3)), threshold: 10, extreme: 5)
        var detector = EventDetector(rules: rules, resuming: [battery], pendingRuns: [pending])
        #expect(detector.openEvents.isEmpty && detector.pendingRuns == [pending])
        #expect(detector.add(reading(s(3), s(4), bpm: 70, contact: false)).isEmpty)
        #expect(detector.add(reading(s(4), s(5), bpm: 70, contact: false)) == [.opened(DetectedEvent(kind: .contactLost, start: at(0), end: nil, lastEnd: at(s(5)), threshold: nil, extreme: nil))])
    }

    @Test("an end before the start is taken as the start, a NaN heart rate as none")
    func oddReadings() {
        let odd = EventReading(start: at(s(5)), end: at(s(4)), heartRate: .nan, contact: nil)
        #expect(odd.end == odd.start && odd.heartRate == nil)
    }
}
