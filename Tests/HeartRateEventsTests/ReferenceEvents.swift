import HeartRateEvents
import Timestamps

/// The events of a whole reading list found by the definition, in one batch and a different
/// shape from the detector: drop out-of-order readings, mark each reading per kind, split at
/// the readings that end runs, split again at long gaps, keep the pieces that last long enough.
enum ReferenceEvents {
    /// An event found, with the index (in the given list) of the reading that made it last
    /// its duration: the reading whose `add` should report it opened.
    struct Found: Equatable {
        var event: DetectedEvent
        var openedBy: Int
    }

    /// A reading that meets a kind's condition, with its index in the given list.
    private struct Member {
        var index: Int
        var start: Int64
        var end: Int64
        var value: Double?
    }

    /// What one reading is to one kind.
    private enum Mark {
        case member(Member)
        case separator
    }

    /// Every event, closed, of every kind, ordered by kind then start.
    static func events(in readings: [EventReading], rules: AlertRules) -> [Found] {
        var kept: [(index: Int, reading: EventReading)] = []
        for (index, reading) in readings.enumerated() where kept.last.map({ reading.start >= $0.reading.start }) ?? true {
            kept.append((index, reading))
        }
        return EventKind.allCases.flatMap { kind -> [Found] in
            guard let minimum = minimum(of: kind, rules) else { return [] }
            let marks: [Mark] = kept.compactMap { mark($0.reading, index: $0.index, kind: kind, rules: rules) }
            let segments = marks.split(whereSeparator: { if case .separator = $0 { true } else { false } })
            return segments.flatMap { segment -> [Found] in
                let members: [Member] = segment.compactMap { if case .member(let member) = $0 { member } else { nil } }
                // Split at gaps longer than the duration, measured from the piece's latest end.
                var pieces: [[Member]] = []
                var latestEnd = Int64.min
                for member in members {
                    if !pieces.isEmpty, member.start - latestEnd <= minimum {
                        pieces[pieces.count - 1].append(member)
                        latestEnd = max(latestEnd, member.end)
                    } else {
                        pieces.append([member])
                        latestEnd = member.end
                    }
                }
                return pieces.compactMap { piece -> Found? in
                    guard let first = piece.first, let latestEnd = piece.map(\.end).max(), latestEnd - first.start >= minimum else { return nil }
                    // The first member whose running latest end reaches the duration.
                    var openedBy = first.index
                    var runningEnd = Int64.min
                    for member in piece {
                        runningEnd = max(runningEnd, member.end)
                        if runningEnd - first.start >= minimum { openedBy = member.index; break }
                    }
                    let values = piece.compactMap(\.value)
                    let extreme: Double? = kind == .high ? values.max() : kind == .low ? values.min() : nil
                    let end = Timestamp(microsecondsSinceEpoch: latestEnd)
                    let event = DetectedEvent(
                        kind: kind, start: Timestamp(microsecondsSinceEpoch: first.start), end: end, lastEnd: end,
                        threshold: kind == .high ? rules.high : kind == .low ? rules.low : nil, extreme: extreme)
                    return Found(event: event, openedBy: openedBy)
                }
            }
        }
    }

    private static func minimum(of kind: EventKind, _ rules: AlertRules) -> Int64? {
        let duration: Duration
        switch kind {
        case .high: duration = rules.highFor
        case .low: duration = rules.lowFor
        case .contactLost: duration = rules.contactLostFor
        case .batteryLow, .disconnected: return nil
        }
        return duration.components.seconds * 1_000_000 + duration.components.attoseconds / 1_000_000_000_000
    }

    /// nil: the kind ignores the reading.
    private static func mark(_ reading: EventReading, index: Int, kind: EventKind, rules: AlertRules) -> Mark? {
        let start = reading.start.microsecondsSinceEpoch
        let end = reading.end.microsecondsSinceEpoch
        if reading.insideWorkout { return .separator }
        switch kind {
        case .high, .low:
            guard let bpm = reading.heartRate else { return nil }
            let meets = kind == .high ? bpm > rules.high : bpm < rules.low
            return meets ? .member(Member(index: index, start: start, end: end, value: bpm)) : .separator
        case .contactLost:
            return reading.contact == false ? .member(Member(index: index, start: start, end: end, value: nil)) : .separator
        case .batteryLow, .disconnected:
            return nil
        }
    }
}
