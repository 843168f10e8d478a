import Foundation
import Timestamps

/// The calendar days of one time zone over a span of time, as SQL can compute them: the
/// zone's UTC offset is constant between its changes (DST, or a change of standard time), so
/// a day key is `date(seconds + offset, 'unixepoch')` with the offset that applies at
/// `seconds`, exactly, whatever the changes inside the span.
struct ZoneDays {
    /// The first and last second SQLite's `date` handles (0000-01-01 to 9999-12-31).
    private static let earliest: Int64 = -62_167_219_200
    private static let latest: Int64 = 253_402_300_799

    let zone: TimeZone
    /// When the offset changes, seconds since the epoch, ascending.
    private(set) var changes: [Int64] = []
    /// `offsets[0]` applies before `changes[0]`, `offsets[i]` from `changes[i - 1]` on.
    private(set) var offsets: [Int64]

    /// The offsets of `zone` that apply to seconds in [first, last].
    init(zone: TimeZone, first: Int64, last: Int64) {
        self.zone = zone
        let first = min(max(first, Self.earliest), Self.latest)
        let last = min(max(last, first), Self.latest)
        var date = Date(timeIntervalSince1970: TimeInterval(first))
        offsets = [Int64(zone.secondsFromGMT(for: date))]
        while let next = zone.nextDaylightSavingTimeTransition(after: date), next > date,
              next.timeIntervalSince1970 <= TimeInterval(last)
        {
            let offset = Int64(zone.secondsFromGMT(for: next))
            let at = Int64(next.timeIntervalSince1970.rounded(.down))
            if offset != offsets[offsets.count - 1] {
                changes.append(at)
                offsets.append(offset)
            }
            date = next
        }
    }

    /// Whether every day boundary in the span falls on a whole minute, so per-minute rollups
    /// never straddle two days.
    var minuteAligned: Bool {
        offsets.allSatisfy { $0 % 60 == 0 } && changes.allSatisfy { $0 % 60 == 0 }
    }

    /// The SQL for the day key ('YYYY-MM-DD') of the integer seconds `expression`.
    func key(seconds expression: String) -> String {
        "date(\(expression) + \(offset(of: expression, changes[...], offsets[...])), 'unixepoch')"
    }

    /// The offset that applies to `expression`: a balanced tree of comparisons, so long spans
    /// cost a few comparisons a row, not one per change.
    private func offset(of expression: String, _ changes: ArraySlice<Int64>, _ offsets: ArraySlice<Int64>) -> String {
        guard let firstChange = changes.first else { return "\(offsets[offsets.startIndex])" }
        if changes.count == 1 {
            return "(CASE WHEN \(expression) < \(firstChange) THEN \(offsets[offsets.startIndex]) ELSE \(offsets[offsets.startIndex + 1]) END)"
        }
        // changes[i] separates offsets[i] (before) from offsets[i + 1] (after).
        let middle = changes.startIndex + changes.count / 2
        let offsetMiddle = offsets.startIndex + (middle - changes.startIndex)
        let before = offset(of: expression, changes[changes.startIndex..<middle], offsets[offsets.startIndex...offsetMiddle])
        let after = offset(of: expression, changes[(middle + 1)...], offsets[(offsetMiddle + 1)...])
        return "(CASE WHEN \(expression) < \(changes[middle]) THEN \(before) ELSE \(after) END)"
    }

    /// The start and end of the day named `key` ('YYYY-MM-DD') in the zone, or nil for a key
    /// that names no day.
    func bounds(ofDay key: String) -> (start: Timestamp, end: Timestamp)? {
        let parts = key.split(separator: "-").compactMap { Int($0) }
        guard parts.count == 3 else { return nil }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        // Noon exists every day; midnight does not where a change skips it.
        let components = DateComponents(year: parts[0], month: parts[1], day: parts[2], hour: 12)
        guard let noon = calendar.date(from: components),
              let nextNoon = calendar.date(byAdding: .day, value: 1, to: noon)
        else { return nil }
        let start = calendar.startOfDay(for: noon), end = calendar.startOfDay(for: nextNoon)
        return (Timestamp(secondsSinceEpoch: start.timeIntervalSince1970), Timestamp(secondsSinceEpoch: end.timeIntervalSince1970))
    }
}
