import GRDB

/// Which identities (key, start) a save transaction finds stored, so that saving a sample
/// again changes nothing. A sample's chunk lies in its UTC hour, so the index loads, once per
/// (key, hour) the batch touches, the starts of the chunks there that overlap the batch's own
/// range of starts: a live stream, whose samples follow the stored ones, decodes nothing.
struct IdentityIndex {
    private struct Group: Hashable {
        var key: SeriesKey
        var hour: Int64
    }

    /// The lowest and highest start the batch has in each group.
    private var ranges: [Group: (low: Int64, high: Int64)] = [:]
    /// The starts known to be stored (or saved by this batch), per group loaded so far.
    private var stored: [Group: Set<Int64>] = [:]
    private var scratch = SeriesPoints()

    /// Notes that the batch holds a sample of `key` starting at `start`: call for every
    /// sample before the first `claim`.
    mutating func expect(_ key: SeriesKey, start: Int64) {
        let group = Group(key: key, hour: SeriesBlobs.hour(of: start))
        if let range = ranges[group] {
            ranges[group] = (min(range.low, start), max(range.high, start))
        } else {
            ranges[group] = (start, start)
        }
    }

    /// Claims the identity (key, start) for a new sample: false when it is stored already
    /// (or claimed earlier in the batch), else true, and it counts as stored from then on.
    mutating func claim(_ key: SeriesKey, start: Int64, _ db: Database) throws -> Bool {
        let group = Group(key: key, hour: SeriesBlobs.hour(of: start))
        if stored[group] == nil { try load(group, db) }
        return stored[group, default: []].insert(start).inserted
    }

    /// Records that the sample of `key` starting at `start` was deleted.
    mutating func remove(_ key: SeriesKey, start: Int64) {
        stored[Group(key: key, hour: SeriesBlobs.hour(of: start))]?.remove(start)
    }

    private mutating func load(_ group: Group, _ db: Database) throws {
        let range = ranges[group] ?? (Int64.min, Int64.max)
        var starts = Set<Int64>()
        for row in try SeriesLookup.chunks(of: group.key, hour: group.hour, holdingStartsIn: range.low, range.high, db) {
            try row.points(into: &scratch)
            let first = scratch.firstIndex(startingAtOrAfter: range.low)
            for start in scratch.starts[first...] {
                guard start <= range.high else { break }
                starts.insert(start)
            }
        }
        stored[group] = starts
    }
}
