import HealthModel
import Foundation
import Timestamps

/// The calendar days of one time zone over a span of time: the zone's UTC offset is constant
/// between its changes (DST, or a change of standard time), so a time's local day is the day
/// of `seconds + offset` with the offset that applies at `seconds`, exactly, whatever the
/// changes inside the span.
struct ZoneDays {
    /// The span of seconds followed: the years 0000 to 9999.
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

    /// The offset that applies at `second` (seconds since the epoch).
    @inline(__always)
    func offset(atSecond second: Int64) -> Int64 {
        guard !changes.isEmpty else { return offsets[0] }
        var low = 0, high = changes.count
        while low < high {
            let middle = (low + high) / 2
            if changes[middle] <= second { low = middle + 1 } else { high = middle }
        }
        return offsets[low]
    }

    /// The start and end of the day with number `day` (days since 1970-01-01 in the zone's
    /// calendar), or nil when it names no day the calendar has.
    func bounds(ofDayNumber day: Int64) -> (start: Timestamp, end: Timestamp)? {
        let (year, month, dayOfMonth) = RFC3339.civilDate(fromDaysSinceEpoch: day)
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        // Noon exists every day; midnight does not where a change skips it.
        let components = DateComponents(year: Int(year), month: Int(month), day: Int(dayOfMonth), hour: 12)
        guard let noon = calendar.date(from: components),
              let nextNoon = calendar.date(byAdding: .day, value: 1, to: noon)
        else { return nil }
        let start = calendar.startOfDay(for: noon), end = calendar.startOfDay(for: nextNoon)
        return (Timestamp(secondsSinceEpoch: start.timeIntervalSince1970), Timestamp(secondsSinceEpoch: end.timeIntervalSince1970))
    }
}
