import HealthModel
import PostgresClient

/// The statements of one batch, inside its transaction: sources and devices made known,
/// other gateways' copies left out, samples appended to chunks, tombstones applied. What it
/// learns (ids, open chunks) is kept by `CentralGateway` only once the transaction commits.
struct BatchWriter {
    let gateway: Int32
    let type: SampleType
    let connection: PostgresConnection
    var sources: [HealthSource: Int32]
    var devices: [String: (id: Int32, details: HealthDevice)]
    var openChunks: [ChunkKey: OpenChunk]

    /// Stores `added` (in anchor order), leaving out what other gateways already stored.
    mutating func write(_ added: [StoredSample]) throws(PostgresError) -> SyncOutcome {
        guard !added.isEmpty else { return SyncOutcome() }
        var outcome = SyncOutcome()
        // Ids first, then the devices locked in id order (two gateways hearing the same
        // straps take their locks in the same order), then what others hold of them.
        var located: [(sample: StoredSample, source: Int32, device: Int32?)] = []
        located.reserveCapacity(added.count)
        // Devices are made known in the order of their identifiers, so that two gateways'
        // batches lock device rows in one order and never wait on each other in a circle.
        var described: [String: HealthDevice] = [:]
        for stored in added { if let device = stored.sample.device { described[device.localIdentifier] = device } }
        for identifier in described.keys.sorted() { _ = try deviceID(described[identifier]!) }
        for stored in added {
            let source = try sourceID(stored.source)
            let device = try stored.sample.device.map { (device) throws(PostgresError) in try deviceID(device) }
            located.append((stored, source, device))
        }
        let lockedDevices = Set(located.compactMap(\.device)).sorted()
        if !lockedDevices.isEmpty {
            _ = try connection.execute(
                "SELECT pg_advisory_xact_lock($1, d) FROM unnest($2::integer[]) AS d",
                [String(CentralSchema.deviceLockClass), PostgresArrayLiteral.int32(lockedDevices)])
        }
        let others = try othersHolding(located.map { ($0.sample.sample, $0.source, $0.device) })
        var groups: [ChunkKey: [ChunkRuns.Point]] = [:]
        var order: [ChunkKey] = []
        for (stored, source, device) in located {
            let sample = stored.sample
            let start = sample.start.microsecondsSinceEpoch
            let beat = sample.antBeat?.packed
            if sample.metadata.syncIdentifier != nil {
                try writeSynced(stored, source: source, device: device)
                outcome.stored += 1
                continue
            }
            if others.contains(series: .init(device: device, source: source), start: start, beat: beat) {
                outcome.duplicates += 1
                continue
            }
            let key = ChunkKey(source: source, device: device, sample: sample)
            if groups[key] == nil { order.append(key) }
            groups[key, default: []].append(.init(start: start, value: sample.canonicalValue, anchor: stored.id, beat: beat))
        }
        for key in order {
            let points = groups[key]!
            outcome.stored += points.count
            try writeChunks(key, points)
        }
        return outcome
    }

    /// The samples of other gateways near the batch's, on the batch's devices and sources.
    private func othersHolding(_ samples: [(sample: QuantitySample, source: Int32, device: Int32?)]) throws(PostgresError)
        -> SampleIdentity
    {
        var identity = SampleIdentity()
        var lowest = Int64.max
        var highest = Int64.min
        var deviceIDs = Set<Int32>()
        var sourceIDs = Set<Int32>()
        for (sample, source, device) in samples {
            let start = sample.start.microsecondsSinceEpoch
            lowest = min(lowest, start)
            highest = max(highest, start)
            if let device { deviceIDs.insert(device) } else { sourceIDs.insert(source) }
        }
        let window = SampleIdentity.beatWindow
        let rows = try connection.execute("""
            SELECT device_id, source_id, starts, beats FROM hrmd.chunk
            WHERE gateway_id <> $1 AND type = $2
              AND (device_id = ANY($3::integer[]) OR (device_id IS NULL AND source_id = ANY($4::integer[])))
              AND last_start >= $5 AND first_start <= $6
            """,
            [String(gateway), type.identifier, PostgresArrayLiteral.int32(deviceIDs.sorted()),
             PostgresArrayLiteral.int32(sourceIDs.sorted()), String(lowest &- window), String(highest &+ window)])
        for row in 0..<rows.rowCount {
            let device: Int32? = rows.string(row, 0) == nil ? nil : Int32(try rows.int64(row, 0))
            let series = SampleIdentity.Series(device: device, source: Int32(try rows.int64(row, 1)))
            let starts = try rows.int64Array(row, 2)
            let beats = rows.string(row, 3) == nil ? nil : try rows.int32Array(row, 3)
            for (index, start) in starts.enumerated() {
                guard let start else { continue }
                identity.add(series: series, start: start, beat: beats.flatMap { index < $0.count ? $0[index] : nil })
            }
        }
        return identity
    }

    /// Appends `points` (one key, anchor order) to the key's open chunk and new chunks.
    private mutating func writeChunks(_ key: ChunkKey, _ points: [ChunkRuns.Point]) throws(PostgresError) {
        let open = try openChunk(key)
        let runs = ChunkRuns(points: points, open: open, capacity: CentralSchema.chunkCapacity)
        if let open, !runs.appended.isEmpty {
            let run = runs.appended
            let summary = Summary(run)
            _ = try connection.execute("SELECT hrmd.chunk_append($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)",
                [String(open.id), PostgresArrayLiteral.int64(run.map(\.start)), PostgresArrayLiteral.double(run.map(\.value)),
                 PostgresArrayLiteral.int64(run.map(\.anchor)), Self.beats(run), String(run.count),
                 String(run.last!.start), String(run.last!.anchor),
                 PostgresArrayLiteral.text(summary.minimum), PostgresArrayLiteral.text(summary.maximum),
                 PostgresArrayLiteral.text(summary.sum)])
            openChunks[key] = OpenChunk(id: open.id, firstStart: open.firstStart, lastStart: run.last!.start, count: open.count + run.count)
        }
        for run in runs.created {
            let summary = Summary(run)
            let inserted = try connection.execute("""
                INSERT INTO hrmd.chunk (gateway_id, type, source_id, device_id, duration, sensor_location, sensor_contact, metadata,
                    first_start, last_start, first_anchor, last_anchor, count, minimum, maximum, sum, starts, vals, anchors, beats)
                VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20)
                RETURNING id
                """,
                [String(gateway), type.identifier, String(key.source), key.device.map(String.init), key.duration.map(String.init),
                 key.sensorLocation.map(String.init), key.sensorContact.map { $0 ? "t" : "f" }, key.metadata,
                 String(run.first!.start), String(run.last!.start), String(run.first!.anchor), String(run.last!.anchor),
                 String(run.count),
                 PostgresArrayLiteral.text(summary.minimum), PostgresArrayLiteral.text(summary.maximum),
                 PostgresArrayLiteral.text(summary.sum),
                 PostgresArrayLiteral.int64(run.map(\.start)), PostgresArrayLiteral.double(run.map(\.value)),
                 PostgresArrayLiteral.int64(run.map(\.anchor)), Self.beats(run)])
            openChunks[key] = OpenChunk(
                id: try inserted.int64(0, 0), firstStart: run.first!.start, lastStart: run.last!.start, count: run.count)
        }
    }

    /// The key's newest chunk, from what committed batches left, or else from the table.
    private mutating func openChunk(_ key: ChunkKey) throws(PostgresError) -> OpenChunk? {
        if let open = openChunks[key] { return open }
        let row = try connection.execute("""
            SELECT id, first_start, last_start, count FROM hrmd.chunk
            WHERE gateway_id = $1 AND type = $2 AND source_id = $3 AND device_id IS NOT DISTINCT FROM $4::integer
              AND duration IS NOT DISTINCT FROM $5::bigint AND sensor_location IS NOT DISTINCT FROM $6::smallint
              AND sensor_contact IS NOT DISTINCT FROM $7::boolean AND metadata IS NOT DISTINCT FROM $8::text
            ORDER BY last_anchor DESC LIMIT 1
            """,
            [String(gateway), type.identifier, String(key.source), key.device.map(String.init), key.duration.map(String.init),
             key.sensorLocation.map(String.init), key.sensorContact.map { $0 ? "t" : "f" }, key.metadata])
        guard row.rowCount == 1 else { return nil }
        let open = OpenChunk(
            id: try row.int64(0, 0), firstStart: try row.int64(0, 1), lastStart: try row.int64(0, 2), count: Int(try row.int64(0, 3)))
        openChunks[key] = open
        return open
    }

    /// A sample under a sync identifier: this gateway's row for it, replaced by a higher version.
    private func writeSynced(_ stored: StoredSample, source: Int32, device: Int32?) throws(PostgresError) {
        let sample = stored.sample
        let key = ChunkKey(source: source, device: device, sample: sample)
        _ = try connection.execute("SELECT hrmd.synced_put($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)",
            [String(gateway), type.identifier, String(source), device.map(String.init), sample.metadata.syncIdentifier.map(CentralText.storable),
             String(sample.metadata.syncVersion ?? 0), String(sample.start.microsecondsSinceEpoch),
             String(sample.end.microsecondsSinceEpoch), PostgresArrayLiteral.text(sample.canonicalValue),
             key.sensorLocation.map(String.init), key.sensorContact.map { $0 ? "t" : "f" }, key.metadata, String(stored.id)])
    }

    /// Removes the samples the tombstones name from this gateway's chunks and synced rows,
    /// and records a central tombstone for each one found; returns how many.
    mutating func delete(_ deleted: [DeletedSample]) throws(PostgresError) -> Int {
        guard !deleted.isEmpty else { return 0 }
        let anchors = Set(deleted.map(\.id))
        let lowest = anchors.min()!, highest = anchors.max()!
        var removed = 0
        let synced = try connection.execute(
            "SELECT source_id, device_id, start_time, anchor FROM hrmd.synced_drop($1, $2, $3)",
            [String(gateway), type.identifier, PostgresArrayLiteral.int64(anchors.sorted())])
        for row in 0..<synced.rowCount {
            try recordTombstone(source: synced.string(row, 0), device: synced.string(row, 1), start: synced.string(row, 2),
                                anchor: synced.string(row, 3))
            removed += 1
        }
        let chunks = try connection.execute("""
            SELECT id, source_id, device_id, starts, vals, anchors, beats FROM hrmd.chunk
            WHERE gateway_id = $1 AND type = $2 AND last_anchor >= $3 AND first_anchor <= $4
            """, [String(gateway), type.identifier, String(lowest), String(highest)])
        for row in 0..<chunks.rowCount {
            let id = try chunks.int64(row, 0)
            let starts = try chunks.int64Array(row, 3)
            let values = try chunks.doubleArray(row, 4)
            let chunkAnchors = try chunks.int64Array(row, 5)
            let beats = chunks.string(row, 6) == nil ? nil : try chunks.int32Array(row, 6)
            var kept: [ChunkRuns.Point] = []
            var gone: [(start: Int64, anchor: Int64)] = []
            for index in starts.indices {
                guard let start = starts[index], let anchor = chunkAnchors[index], let value = values[index] else { continue }
                if anchors.contains(anchor) {
                    gone.append((start, anchor))
                } else {
                    kept.append(.init(start: start, value: value, anchor: anchor, beat: beats.flatMap { $0[index] }))
                }
            }
            guard !gone.isEmpty else { continue }
            for (start, anchor) in gone {
                try recordTombstone(source: chunks.string(row, 1), device: chunks.string(row, 2), start: String(start), anchor: String(anchor))
            }
            removed += gone.count
            // The open chunk may change shape: find it again from the table next time.
            openChunks = openChunks.filter { $0.value.id != id }
            if kept.isEmpty {
                _ = try connection.execute("SELECT hrmd.chunk_drop($1)", [String(id)])
                continue
            }
            let summary = Summary(kept)
            _ = try connection.execute("SELECT hrmd.chunk_replace($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)",
                [String(id), PostgresArrayLiteral.int64(kept.map(\.start)), PostgresArrayLiteral.double(kept.map(\.value)),
                 PostgresArrayLiteral.int64(kept.map(\.anchor)), Self.beats(kept), String(kept.count),
                 String(kept.first!.start), String(kept.last!.start), String(kept.first!.anchor), String(kept.last!.anchor),
                 PostgresArrayLiteral.text(summary.minimum), PostgresArrayLiteral.text(summary.maximum),
                 PostgresArrayLiteral.text(summary.sum)])
        }
        return removed
    }

    /// The central tombstone of a sample this gateway removed (ids and times as PostgreSQL's text).
    private func recordTombstone(source: String?, device: String?, start: String?, anchor: String?) throws(PostgresError) {
        _ = try connection.execute("""
            INSERT INTO hrmd.tombstone (gateway_id, type, source_id, device_id, start_time, anchor)
            VALUES ($1, $2, $3, $4, $5, $6)
            """, [String(gateway), type.identifier, source, device, start, anchor])
    }

    private mutating func sourceID(_ source: HealthSource) throws(PostgresError) -> Int32 {
        if let id = sources[source] { return id }
        // Through the schema's function: a gateway adds a source, and changes none.
        let row = try connection.execute("SELECT hrmd.source_id($1, $2)", [CentralText.storable(source.name), source.version.map(CentralText.storable)])
        let id = Int32(try row.int64(0, 0))
        sources[source] = id
        return id
    }

    private mutating func deviceID(_ device: HealthDevice) throws(PostgresError) -> Int32 {
        if let known = devices[device.localIdentifier], known.details == device { return known.id }
        // Through the schema's function: a gateway adds a device and fills what is still empty,
        // and changes nothing another wrote.
        let row = try connection.execute(
            "SELECT hrmd.device_id($1, $2, $3, $4, $5, $6, $7)",
            [device.localIdentifier, device.name, device.manufacturer, device.model, device.hardwareVersion,
             device.firmwareVersion, device.softwareVersion].map { $0.map(CentralText.storable) })
        let id = Int32(try row.int64(0, 0))
        devices[device.localIdentifier] = (id, device)
        return id
    }

    /// The beat stamps of `points` as an array literal, or nil when none has one.
    private static func beats(_ points: [ChunkRuns.Point]) -> String? {
        guard points.contains(where: { $0.beat != nil }) else { return nil }
        return PostgresArrayLiteral.int32(points.map(\.beat))
    }

    private struct Summary {
        var minimum = Double.infinity
        var maximum = -Double.infinity
        var sum = 0.0

        init(_ points: [ChunkRuns.Point]) {
            for point in points {
                minimum = min(minimum, point.value)
                maximum = max(maximum, point.value)
                sum += point.value
            }
        }
    }
}
