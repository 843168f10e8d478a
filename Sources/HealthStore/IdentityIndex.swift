import HealthModel
import GRDB

/// Which identities (key, start) a save transaction finds stored, so that saving a sample
/// again changes nothing. A sample's chunk lies in its UTC hour, so the index loads, once per
/// (key, hour) the batch touches, the starts of the chunks there that overlap the batch's own
/// range of starts: a live stream, whose samples follow the stored ones, decodes nothing, and
/// once the store's saves know the group's latest start (`WriteCache`), reads nothing.
struct IdentityIndex {
    private typealias Group = SeriesGroup

    /// The starts of one group known to be stored or claimed by this batch.
    private struct Claims {
        /// What the chunks held when the group was loaded.
        var stored: Set<Int64>
        /// The starts this batch claimed, in order.
        var claimed: [Int64] = []
        /// nil while `claimed` increases: a start above the last is then new without a set
        /// (the usual case); once one is not, every claimed start is kept here.
        var claimedSet: Set<Int64>?

        init(stored: Set<Int64>) { self.stored = stored }

        mutating func claim(_ start: Int64) -> Bool {
            if !stored.isEmpty, stored.contains(start) { return false }
            if claimedSet == nil {
                guard let last = claimed.last, start <= last else {
                    claimed.append(start)
                    return true
                }
                claimedSet = Set(claimed)
            }
            return claimedSet?.insert(start).inserted ?? false
        }

        mutating func remove(_ start: Int64) {
            stored.remove(start)
            if claimedSet != nil {
                claimedSet?.remove(start)
            } else if let index = claimed.firstIndex(of: start) {
                claimed.remove(at: index)
            }
        }
    }

    /// The lowest and highest start the batch has in each group.
    private var ranges: [Group: (low: Int64, high: Int64)] = [:]
    /// The group `expect` widened last: batches come in long runs of one key and hour.
    private var expecting: (group: Group, low: Int64, high: Int64)?
    private var groups: [Group: Claims] = [:]
    /// The group of the previous call: batches come in long runs of one key and hour.
    private var recent: (group: Group, claims: Claims)?
    private var scratch = SeriesPoints()

    /// Notes that the batch holds a sample of `key` starting at `start`: call for every
    /// sample before the first `claim`.
    mutating func expect(_ key: SeriesKey, start: Int64) {
        let group = Group(key, start: start)
        if let range = expecting, range.group == group {
            expecting = (group, min(range.low, start), max(range.high, start))
            return
        }
        parkExpected()
        let range = ranges[group]
        expecting = (group, min(range?.low ?? start, start), max(range?.high ?? start, start))
    }

    /// Moves the range being widened to `ranges`.
    private mutating func parkExpected() {
        guard let expecting else { return }
        ranges[expecting.group] = (expecting.low, expecting.high)
        self.expecting = nil
    }

    /// Claims the identity (key, start) for a new sample: false when it is stored already
    /// (or claimed earlier in the batch), else true, and it counts as stored from then on.
    mutating func claim(_ key: SeriesKey, start: Int64, _ cache: inout WriteCache.Contents, _ db: Database) throws -> Bool {
        let group = Group(key, start: start)
        var claims = try take(group, &cache, db)
        let claimed = claims.claim(start)
        recent = (group, claims)
        if claimed { cache.noteStored(start, in: group) }
        return claimed
    }

    /// Records that the sample of `key` starting at `start` was deleted.
    mutating func remove(_ key: SeriesKey, start: Int64) {
        let group = Group(key, start: start)
        park()
        groups[group]?.remove(start)
    }

    /// The claims of `group`, loaded when first needed.
    private mutating func take(_ group: Group, _ cache: inout WriteCache.Contents, _ db: Database) throws -> Claims {
        if let recent, recent.group == group {
            self.recent = nil
            return recent.claims
        }
        park()
        if let claims = groups.removeValue(forKey: group) { return claims }
        return Claims(stored: try storedStarts(of: group, &cache, db))
    }

    /// Puts the recent group's claims back with the others.
    private mutating func park() {
        guard let recent else { return }
        groups[recent.group] = recent.claims
        self.recent = nil
    }

    /// The stored starts of `group` in the batch's range; none to look for when the batch
    /// starts after the group's latest start.
    private mutating func storedStarts(of group: Group, _ cache: inout WriteCache.Contents, _ db: Database) throws -> Set<Int64> {
        parkExpected()
        let range = ranges[group] ?? (Int64.min, Int64.max)
        let latest = try cache.latestStart(of: group) ?? SeriesLookup.latestStart(of: group.key, hour: group.hour, db) ?? .min
        cache.noteStored(latest, in: group)
        guard range.low <= latest else { return [] }
        var starts = Set<Int64>()
        for row in try SeriesLookup.chunks(of: group.key, hour: group.hour, holdingStartsIn: range.low, range.high, db) {
            try row.points(into: &scratch)
            let first = scratch.firstIndex(startingAtOrAfter: range.low)
            for start in scratch.starts[first...] {
                guard start <= range.high else { break }
                starts.insert(start)
            }
        }
        return starts
    }
}
