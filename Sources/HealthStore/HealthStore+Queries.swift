import HealthModel
import Foundation
import GRDB
import HealthUnits
import Timestamps


extension HealthStore {
    /// The samples that match `query`, oldest first unless it asks for newest first.
    public func samples(_ query: SampleQuery) throws(HealthStoreError) -> [StoredSample] {
        var result: [StoredSample] = []
        try enumerateSamples(query) { result.append($0) }
        return result
    }

    /// Calls `body` with each sample that matches `query`, reading from one snapshot without
    /// holding them all in memory.
    public func enumerateSamples(_ query: SampleQuery, _ body: (StoredSample) throws -> Void) throws(HealthStoreError) {
        try enumerateItems(query) { item, contexts in
            try body(contexts.sample(type: query.type, start: item.start, value: item.value, anchor: item.anchor, context: item.context))
        }
    }

    /// Calls `body` with each sample that matches `query` as a point and the contexts of the
    /// points so far: what a reader of many samples uses to handle what samples share once
    /// (`StoredSample(point, type:contexts:)` makes the sample).
    public func enumeratePoints(_ query: SampleQuery, _ body: (StoredPoint, SampleContexts) throws -> Void) throws(HealthStoreError) {
        try enumerateItems(query) { item, contexts in
            try body(contexts.point(start: item.start, value: item.value, anchor: item.anchor, context: item.context), contexts.shared)
        }
    }

    /// Calls `body` with each sample that matches `query` as the chunks hold it, with the
    /// contexts that make it a `StoredSample`.
    func enumerateItems(_ query: SampleQuery, _ body: (SampleStream.Item, ChunkContexts) throws -> Void) throws(HealthStoreError) {
        let since = query.since?.microsecondsSinceEpoch ?? Int64.min
        let until = query.until?.microsecondsSinceEpoch ?? Int64.max
        guard since < until else { return }
        var conditions = ["typeId = ?"]
        var arguments: StatementArguments = [query.type.storageID]
        if query.since != nil {
            // A chunk stays in the UTC hour it starts in.
            conditions.append("start >= ? AND last >= ?")
            _ = arguments.append(contentsOf: [SeriesBlobs.hour(of: since) * SeriesBlobs.hour, since])
        }
        if query.until != nil {
            conditions.append("start < ?")
            _ = arguments.append(contentsOf: [until])
        }
        if let source = query.source {
            conditions.append("sourceId = (SELECT id FROM source WHERE name = ?)")
            _ = arguments.append(contentsOf: [source])
        }
        if let device = query.device {
            let condition = Self.deviceCondition(device)
            conditions.append(condition.sql)
            _ = arguments.append(contentsOf: condition.arguments)
        }
        try read { db in
            var conditions = conditions, arguments = arguments
            if let visible = try ReaderScope(reader: query.reader, type: query.type, db).condition(on: "sourceId") {
                conditions.append(visible.sql)
                _ = arguments.append(contentsOf: visible.arguments)
            }
            let rows = try Row.fetchCursor(
                db,
                sql: """
                    SELECT \(SeriesRow.columns) FROM series WHERE \(conditions.joined(separator: " AND "))
                    ORDER BY start \(query.newestFirst ? "DESC" : "ASC")
                    """,
                arguments: arguments)
            var contexts = ChunkContexts()
            var stream = SampleStream(newestFirst: query.newestFirst)
            var points = SeriesPoints()
            var remaining = query.limit ?? Int.max
            let emit = { (item: SampleStream.Item) throws -> Bool in
                guard remaining > 0 else { return false }
                remaining -= 1
                try body(item, contexts)
                return remaining > 0
            }
            while let row = try rows.next() {
                let chunk = SeriesRow(row)
                guard try stream.drain(beforeChunkAt: chunk.start, emit) else { return }
                try chunk.points(into: &points)
                stream.add(points, since: since, until: until, context: try contexts.add(chunk, db))
            }
            _ = try stream.drain(beforeChunkAt: nil, emit)
        }
    }

    /// How many samples of `type` the store holds.
    /// The series rows of one device identifier (of any source).
    static func deviceCondition(_ device: String) -> (sql: String, arguments: StatementArguments) {
        ("deviceId IN (SELECT id FROM device WHERE localIdentifier = ?)", [device])
    }

    public func sampleCount(of type: SampleType) throws(HealthStoreError) -> Int {
        try read { db in
            try Int.fetchOne(db, sql: "SELECT IFNULL(SUM(count), 0) FROM series WHERE typeId = ?", arguments: [type.storageID]) ?? 0
        }
    }
}
