import HealthModel
import GRDB

/// The ANT+ beat stamps of samples (table `antBeat`): a row (anchor, `ANTBeatStamp.packed`)
/// for each stored sample that has a stamp, written in the transaction that gives the sample
/// its anchor and deleted with the sample. Only the anchored changes query reads them back.
enum ANTBeats {
    /// Records the stamp of each sample that was given an anchor.
    static func record(_ stamps: [(anchor: Int64, stamp: ANTBeatStamp)], _ db: Database) throws {
        guard !stamps.isEmpty else { return }
        let insert = try db.cachedStatement(sql: "INSERT INTO antBeat (anchor, stamp) VALUES (?, ?)")
        for (anchor, stamp) in stamps { try insert.execute(arguments: [anchor, stamp.packed]) }
    }

    /// Forgets the stamps of the samples with ids `anchors` (removed or replaced).
    static func remove(_ anchors: [Int64], _ db: Database) throws {
        guard !anchors.isEmpty, let bounds = try bounds(db) else { return }
        let delete = try db.cachedStatement(sql: "DELETE FROM antBeat WHERE anchor = ?")
        for anchor in anchors where bounds.contains(anchor) { try delete.execute(arguments: [anchor]) }
    }

    /// Fills in the stamps of `samples`, which are in anchor order. A store without ANT+
    /// samples among them pays one lookup of the table's first and last anchor; else the
    /// stamps come from one range read when the samples' anchors are dense enough, or one
    /// lookup per sample when they are spread over other samples' anchors.
    static func fill(_ samples: inout [StoredSample], _ db: Database) throws {
        guard let first = samples.first?.id, let last = samples.last?.id, let bounds = try bounds(db),
              first <= bounds.upperBound, last >= bounds.lowerBound
        else { return }
        let low = max(first, bounds.lowerBound)
        let high = min(last, bounds.upperBound)
        if high - low < 4 * Int64(samples.count) {
            var stamps: [Int64: Int32] = [:]
            let rows = try Row.fetchCursor(
                db.cachedStatement(sql: "SELECT anchor, stamp FROM antBeat WHERE anchor BETWEEN ? AND ?"), arguments: [low, high])
            while let row = try rows.next() { stamps[row[0]] = row[1] }
            guard !stamps.isEmpty else { return }
            for index in samples.indices {
                if let packed = stamps[samples[index].id] { samples[index].sample.antBeat = ANTBeatStamp(packed: packed) }
            }
        } else {
            let lookup = try db.cachedStatement(sql: "SELECT stamp FROM antBeat WHERE anchor = ?")
            for index in samples.indices where (low...high).contains(samples[index].id) {
                if let packed = try Int32.fetchOne(lookup, arguments: [samples[index].id]) {
                    samples[index].sample.antBeat = ANTBeatStamp(packed: packed)
                }
            }
        }
    }

    /// The first and last anchor with a stamp, or nil when none has one: two seeks (SQLite
    /// reads MIN or MAX alone off the key, but both in one SELECT by a scan).
    private static func bounds(_ db: Database) throws -> ClosedRange<Int64>? {
        guard let row = try Row.fetchOne(db.cachedStatement(sql: """
                  SELECT (SELECT MIN(anchor) FROM antBeat), (SELECT MAX(anchor) FROM antBeat)
                  """)),
              let low = row[0] as Int64?, let high = row[1] as Int64?
        else { return nil }
        return low...high
    }
}
