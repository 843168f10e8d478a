import HealthModel
import PostgresClient
import Timestamps

/// Events as the gateways sent them (`hrmd.event`).
extension CentralReader {
    /// The events `query` asks for, every gateway's, newest start first (the reader's view is
    /// the whole store: the central reader answers its owner only).
    public func events(_ query: EventQuery) throws(CentralStoreError) -> [HealthEvent] {
        let types = query.types.isEmpty ? SampleType.eventTypes : query.types.filter { $0.kind == .category }
        guard query.limit > 0, !types.isEmpty else { return [] }
        var conditions = ["e.type = ANY($1::text[])"]
        var parameters: [String?] = [PostgresArrayLiteral.text(types.map(\.identifier))]
        func add(_ condition: String, _ value: String) {
            parameters.append(value)
            conditions.append(condition.replacingOccurrences(of: "?", with: "$\(parameters.count)"))
        }
        if let since = query.since { add("e.latest_time >= ?", String(since.microsecondsSinceEpoch)) }
        if let until = query.until { add("e.start_time < ?", String(until.microsecondsSinceEpoch)) }
        if let person = query.person { add("e.person = ?", person) }
        if let device = query.device { add("e.device = ?", device) }
        if query.openOnly { conditions.append("e.end_time IS NULL") }
        parameters.append(String(min(query.limit, EventQuery.answerLimit)))
        let sql = """
            SELECT e.uuid, e.type, s.name, e.device, e.person, e.start_time, e.end_time, e.latest_time, e.threshold, e.extreme
            FROM hrmd.event e JOIN hrmd.source s ON s.id = e.source_id
            WHERE \(conditions.joined(separator: " AND ")) ORDER BY e.start_time DESC, e.id DESC LIMIT $\(parameters.count)
            """
        return try Self.run { () throws(PostgresError) -> Result<[HealthEvent], CentralStoreError> in
            let rows = try connection.execute(sql, parameters)
            var events: [HealthEvent] = []
            for row in 0..<rows.rowCount {
                guard let type = rows.string(row, 1).flatMap(SampleType.init(identifier:)), type.kind == .category else { continue }
                events.append(HealthEvent(
                    id: rows.string(row, 0) ?? "", type: type, source: rows.string(row, 2) ?? "", device: rows.string(row, 3),
                    person: rows.string(row, 4), start: Timestamp(microsecondsSinceEpoch: try rows.int64(row, 5)),
                    end: rows.isNull(row, 6) ? nil : Timestamp(microsecondsSinceEpoch: try rows.int64(row, 6)),
                    latest: Timestamp(microsecondsSinceEpoch: try rows.int64(row, 7)),
                    threshold: rows.string(row, 8).flatMap(Double.init), extreme: rows.string(row, 9).flatMap(Double.init)))
            }
            return .success(events)
        }
    }
}
