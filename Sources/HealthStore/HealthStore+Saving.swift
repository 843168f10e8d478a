import Foundation
import GRDB
import GRDBSQLite

/// What one `save` did with each sample.
public struct SaveReport: Sendable, Equatable {
    /// Samples added to the store.
    public var stored = 0
    /// Samples whose identity (or sync identifier at the same or a higher version) was
    /// already stored: nothing changed.
    public var unchanged = 0
    /// Stored samples replaced by a higher sync version.
    public var replaced = 0
    /// Samples not saved because the source lacks share authorization, by type.
    public var denied: [SampleType: Int] = [:]
    /// The share status each type of the batch had inside the write transaction.
    public var authorization: [SampleType: AuthorizationStatus] = [:]

    public init() {}

    /// All samples not saved for lack of authorization.
    public var deniedCount: Int { denied.values.reduce(0, +) }
}

/// What `save` does with samples of a type the source may not share.
public enum SavePolicy: Sendable, Hashable {
    /// Saves the rest and counts them in `SaveReport.denied`; a type never asked for is
    /// recorded as a `notDetermined` request (the recording daemon's way).
    case skipUnauthorized
    /// Saves nothing and throws `HealthStoreError.shareNotAuthorized`; records no request
    /// (a program's batch is all or nothing, as HealthKit's save).
    case refuseUnauthorized
}

extension HealthStore {
    /// Saves `samples` written by `source` in one transaction.
    ///
    /// Authorization is checked inside the transaction, per type, so a revoke applies from the
    /// next save; `policy` says what happens to samples of a type the source may not share.
    /// Saving a sample whose identity (source, device, type, start) is stored changes nothing;
    /// with a sync identifier, a higher sync version replaces the stored sample and leaves a
    /// tombstone.
    public func save(_ samples: [QuantitySample], from source: HealthSource, policy: SavePolicy = .skipUnauthorized)
        throws(HealthStoreError) -> SaveReport
    {
        guard !samples.isEmpty else { return SaveReport() }
        return try writeAnnouncing { db in
            if policy == .refuseUnauthorized { try Self.refuseUnauthorized(samples, source: source.name, db) }
            var writer = try SampleWriter(db: db, source: source)
            for sample in samples { try writer.save(sample) }
            try writer.finish()
            return (writer.report, try pendingChange(writer.changes, db))
        }
    }

    /// Throws `shareNotAuthorized` when `source` may not share one of the types of `samples`.
    private static func refuseUnauthorized(_ samples: [QuantitySample], source: String, _ db: Database) throws {
        var types = Set<SampleType>()
        for sample in samples { types.insert(sample.type) }
        var refused: [SampleType] = []
        for type in types where try status(of: .share, source: source, type: type, db) != .sharingAuthorized {
            refused.append(type)
        }
        guard refused.isEmpty else {
            throw HealthStoreError.shareNotAuthorized(
                source: source, types: refused.sorted { $0.storageID < $1.storageID }.map(\.identifier))
        }
    }
}

/// The state of one save transaction: resolved ids, authorization, prepared statements.
private struct SampleWriter {
    let db: Database
    let sourceID: Int64
    let sourceName: String
    var report = SaveReport()
    /// The types whose samples this save added or replaced.
    private(set) var changes = ChangeCollector()
    private var anchors: AnchorSequence
    private var rollups = MinuteRollups()
    private var deviceIDs: [String: Int64] = [:]
    /// The device of the previous sample: batches usually hold long runs of one device.
    private var lastDevice: (device: HealthDevice, id: Int64)?
    private let insert: Statement
    private let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return encoder
    }()

    init(db: Database, source: HealthSource) throws {
        self.db = db
        self.sourceID = try HealthStore.upsertSource(source, db)
        self.sourceName = source.name
        self.anchors = try AnchorSequence(db)
        self.insert = try db.cachedStatement(sql: """
            INSERT INTO sample (id, typeId, sourceId, deviceId, start, "end", value, sensorLocation,
                                sensorContact, metadata, syncIdentifier, syncVersion)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT DO NOTHING
            """)
    }

    /// Records the anchors this transaction took and the per-minute totals.
    mutating func finish() throws {
        try anchors.save(db)
        try rollups.flush(sourceID: sourceID, db)
    }

    mutating func save(_ sample: QuantitySample) throws {
        guard try isAuthorized(sample.type) else {
            report.denied[sample.type, default: 0] += 1
            return
        }
        if let syncIdentifier = sample.metadata.syncIdentifier {
            let version = sample.metadata.syncVersion ?? 0
            if let row = try Row.fetchOne(
                db, sql: "SELECT id, syncVersion FROM sample WHERE sourceId = ? AND syncIdentifier = ?",
                arguments: [sourceID, syncIdentifier])
            {
                let storedVersion: Int = row[1] ?? 0
                guard version > storedVersion else {
                    report.unchanged += 1
                    return
                }
                try anchors.save(db)
                try rollups.flush(sourceID: sourceID, db)
                _ = try HealthStore.deleteWithTombstones(where: "id = ?", arguments: [row[0] as Int64], db)
                anchors = try AnchorSequence(db)
                try insertRow(sample)
                report.replaced += 1
                return
            }
        }
        if try insertRow(sample) { report.stored += 1 } else { report.unchanged += 1 }
    }

    private mutating func isAuthorized(_ type: SampleType) throws -> Bool {
        if let status = report.authorization[type] { return status == .sharingAuthorized }
        let status = try HealthStore.shareStatusRequesting(sourceID: sourceID, type: type, db)
        report.authorization[type] = status
        return status == .sharingAuthorized
    }

    @discardableResult
    private mutating func insertRow(_ sample: QuantitySample) throws -> Bool {
        let deviceID = try sample.device.map { try resolve($0) }
        let metadata = sample.metadata
        let extra: String? = metadata.extra.isEmpty
            ? nil : String(decoding: try encoder.encode(metadata.extra), as: UTF8.self)
        let id = anchors.last + 1
        try insert.bind(
            .int(id), .int(Int64(sample.type.storageID)), .int(sourceID), deviceID.map(SQLiteValue.int) ?? .null,
            .int(sample.start.microsecondsSinceEpoch), .int(sample.end.microsecondsSinceEpoch),
            .real(sample.canonicalValue), metadata.sensorLocation.map { .int(Int64($0.rawValue)) } ?? .null,
            metadata.sensorContact.map { .int($0 ? 1 : 0) } ?? .null, extra.map(SQLiteValue.text) ?? .null,
            metadata.syncIdentifier.map(SQLiteValue.text) ?? .null,
            metadata.syncIdentifier == nil ? .null : .int(Int64(metadata.syncVersion ?? 0)))
        try insert.stepToCompletion(db)
        guard db.changesCount > 0 else { return false }
        anchors.last = id
        changes.record(sample.type, source: sourceName)
        rollups.add(typeID: sample.type.storageID, start: sample.start.microsecondsSinceEpoch, value: sample.canonicalValue)
        return true
    }

    /// The row id of `device`, adding it or filling in what became known about it.
    private mutating func resolve(_ device: HealthDevice) throws -> Int64 {
        if let last = lastDevice, last.device == device { return last.id }
        let id = try resolveUncached(device)
        lastDevice = (device, id)
        return id
    }

    private mutating func resolveUncached(_ device: HealthDevice) throws -> Int64 {
        if let id = deviceIDs[device.localIdentifier] { return id }
        let id = try Int64.fetchOne(
            db,
            sql: """
                INSERT INTO device (localIdentifier, name, manufacturer, model, hardwareVersion,
                                    firmwareVersion, softwareVersion)
                VALUES (?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (localIdentifier) DO UPDATE SET
                    name = COALESCE(excluded.name, name),
                    manufacturer = COALESCE(excluded.manufacturer, manufacturer),
                    model = COALESCE(excluded.model, model),
                    hardwareVersion = COALESCE(excluded.hardwareVersion, hardwareVersion),
                    firmwareVersion = COALESCE(excluded.firmwareVersion, firmwareVersion),
                    softwareVersion = COALESCE(excluded.softwareVersion, softwareVersion)
                RETURNING id
                """,
            arguments: [
                device.localIdentifier, device.name, device.manufacturer, device.model,
                device.hardwareVersion, device.firmwareVersion, device.softwareVersion,
            ])!
        deviceIDs[device.localIdentifier] = id
        return id
    }
}

/// A value bound straight to a statement parameter.
private enum SQLiteValue {
    case int(Int64)
    case real(Double)
    case text(String)
    case null
}

extension Statement {
    /// Binds `values` to parameters 1… through SQLite's own API (GRDB's documented raw
    /// access), the hot path of bulk saves: no argument array of existentials per row.
    fileprivate func bind(_ values: SQLiteValue...) throws {
        let handle = sqliteStatement
        sqlite3_reset(handle)
        for (offset, value) in values.enumerated() {
            let index = CInt(offset + 1)
            let code: CInt
            switch value {
            case .int(let number): code = sqlite3_bind_int64(handle, index, number)
            case .real(let number): code = sqlite3_bind_double(handle, index, number)
            case .text(let text): code = sqlite3_bind_text(handle, index, text, -1, sqliteTransient)
            case .null: code = sqlite3_bind_null(handle, index)
            }
            guard code == SQLITE_OK else { throw DatabaseError(resultCode: ResultCode(rawValue: code), message: "cannot bind parameter \(index)") }
        }
    }

    /// Runs the bound statement to its end.
    fileprivate func stepToCompletion(_ db: Database) throws {
        let code = sqlite3_step(sqliteStatement)
        guard code == SQLITE_DONE else {
            sqlite3_reset(sqliteStatement)
            throw DatabaseError(resultCode: ResultCode(rawValue: code), message: db.lastErrorMessage, sql: sql)
        }
    }
}

/// SQLITE_TRANSIENT: SQLite copies the bound text before the call returns.
private let sqliteTransient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
