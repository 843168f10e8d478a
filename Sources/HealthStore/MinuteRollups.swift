import GRDB

/// Keeps the `minuteRollup` table in step with `sample`: additions are summed per minute in
/// memory and written once per transaction; deletions recompute the minutes they touched.
struct MinuteRollups {
    private struct Key: Hashable {
        var typeID: Int
        var minute: Int64
    }

    private struct Totals {
        var count = 0
        var sum = 0.0
        var minimum = Double.infinity
        var maximum = -Double.infinity

        mutating func add(_ value: Double) {
            count += 1
            sum += value
            minimum = min(minimum, value)
            maximum = max(maximum, value)
        }
    }

    private var pending: [Key: Totals] = [:]

    /// Counts one inserted sample.
    mutating func add(typeID: Int, start: Int64, value: Double) {
        let minute = start >= 0 ? start / 60_000_000 : (start - 59_999_999) / 60_000_000
        pending[Key(typeID: typeID, minute: minute), default: Totals()].add(value)
    }

    /// Writes the pending totals of `sourceID`.
    mutating func flush(sourceID: Int64, _ db: Database) throws {
        guard !pending.isEmpty else { return }
        let upsert = try db.cachedStatement(sql: """
            INSERT INTO minuteRollup (typeId, minute, sourceId, count, sum, minimum, maximum) VALUES (?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT (typeId, minute, sourceId) DO UPDATE SET
                count = count + excluded.count, sum = sum + excluded.sum,
                minimum = MIN(minimum, excluded.minimum), maximum = MAX(maximum, excluded.maximum)
            """)
        for (key, totals) in pending {
            try upsert.execute(arguments: [key.typeID, key.minute, sourceID, totals.count, totals.sum, totals.minimum, totals.maximum])
        }
        pending.removeAll()
    }

    /// Recomputes the minutes of the samples matching `condition`; call with `deleting` to
    /// delete those samples in between.
    static func recompute(where condition: String, arguments: StatementArguments, _ db: Database, deleting: () throws -> Void) throws {
        try db.execute(sql: "CREATE TEMP TABLE IF NOT EXISTS touchedMinute (typeId INTEGER, minute INTEGER, sourceId INTEGER)")
        try db.execute(sql: "DELETE FROM touchedMinute")
        try db.execute(
            sql: """
                INSERT INTO touchedMinute SELECT DISTINCT typeId, \(Schema.minute(of: "start")), sourceId
                FROM sample WHERE \(condition)
                """,
            arguments: arguments)
        try deleting()
        try db.execute(sql: """
            DELETE FROM minuteRollup WHERE (typeId, minute, sourceId) IN (SELECT typeId, minute, sourceId FROM touchedMinute);
            INSERT INTO minuteRollup (typeId, minute, sourceId, count, sum, minimum, maximum)
                SELECT s.typeId, \(Schema.minute(of: "s.start")), s.sourceId, COUNT(*), SUM(s.value), MIN(s.value), MAX(s.value)
                FROM sample s JOIN touchedMinute t
                    ON s.typeId = t.typeId AND s.sourceId = t.sourceId
                    AND s.start >= t.minute * 60000000 AND s.start < (t.minute + 1) * 60000000
                GROUP BY 1, 2, 3;
            DELETE FROM touchedMinute;
            """)
    }
}
