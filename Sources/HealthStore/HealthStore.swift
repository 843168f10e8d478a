import Foundation
import GRDB
import HealthUnits
import Timestamps

/// The shared health store: HealthKit's model (typed quantity samples with source, device and
/// metadata; per-source, per-type authorization; anchored change queries) over one SQLite
/// file in WAL mode, so a daemon can write while command-line readers read.
///
/// Every method is one transaction. Writers are checked against authorization inside their
/// write transaction, so a revoke applies from the next write.
public final class HealthStore: Sendable {
    /// How `open` treats a missing file.
    public enum OpenMode: Sendable {
        /// Create the file (and never its directory) when it does not exist.
        case createIfMissing
        /// Fail with `.missing` when the file does not exist.
        case existingOnly
    }

    /// The file behind the store, or nil for an in-memory store.
    public let path: String?
    let writer: any DatabaseWriter

    /// Opens (and, if asked, creates) the store at `path`, upgrading an older schema.
    public static func open(path: String, mode: OpenMode) throws(HealthStoreError) -> HealthStore {
        let exists = FileManager.default.fileExists(atPath: path)
        if !exists {
            guard mode == .createIfMissing else { throw .missing(path: path) }
            try checkCanCreate(path)
        }
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        configuration.foreignKeysEnabled = true
        configuration.label = "HealthStore"
        do {
            let pool = try DatabasePool(path: path, configuration: configuration)
            return try HealthStore(writer: pool, path: path)
        } catch let error as HealthStoreError {
            throw error.withPath(path)
        } catch {
            throw classify(error, path: path, creating: !exists)
        }
    }

    /// A store over any GRDB writer (an in-memory `DatabaseQueue` in tests). Runs migrations.
    public convenience init(writer: any DatabaseWriter) throws(HealthStoreError) {
        try self.init(writer: writer, path: nil)
    }

    private init(writer: any DatabaseWriter, path: String?) throws(HealthStoreError) {
        self.writer = writer
        self.path = path
        let migrator = Schema.migrator
        try Self.run {
            if try writer.read({ try migrator.hasBeenSuperseded($0) }) {
                throw HealthStoreError.newerSchema(path: path ?? ":memory:")
            }
            try migrator.migrate(writer)
            try writer.write { try Schema.registerTypes($0) }
        }
    }

    // MARK: Authorization

    /// Records that `source` wants to share `types` (rows become `notDetermined` unless the
    /// user already answered) and returns the current share status of each.
    @discardableResult
    public func requestAuthorization(source: String, toShare types: [SampleType]) throws(HealthStoreError)
        -> [SampleType: AuthorizationStatus]
    {
        try write { db in
            let sourceID = try Self.upsertSource(HealthSource(name: source), db)
            var statuses: [SampleType: AuthorizationStatus] = [:]
            for type in types { statuses[type] = try Self.shareStatus(sourceID: sourceID, type: type, db) }
            return statuses
        }
    }

    /// Sets whether `source` may share `type`: the user's grant (`.sharingAuthorized`) or
    /// revoke (`.sharingDenied`). Takes effect from the source's next write.
    public func setShareAuthorization(_ status: AuthorizationStatus, source: String, type: SampleType)
        throws(HealthStoreError)
    {
        try setAuthorization(column: "shareStatus", status, source: source, type: type)
    }

    /// Sets whether `source` may read `type` (HealthKit's read authorization): a query that
    /// names the source as its reader is refused unless this is `.sharingAuthorized`.
    public func setReadAuthorization(_ status: AuthorizationStatus, source: String, type: SampleType)
        throws(HealthStoreError)
    {
        try setAuthorization(column: "readStatus", status, source: source, type: type)
    }

    private func setAuthorization(column: String, _ status: AuthorizationStatus, source: String, type: SampleType)
        throws(HealthStoreError)
    {
        try write { db in
            let sourceID = try Self.upsertSource(HealthSource(name: source), db)
            try db.execute(
                sql: """
                    INSERT INTO authorization (sourceId, typeId, \(column)) VALUES (?, ?, ?)
                    ON CONFLICT (sourceId, typeId) DO UPDATE SET \(column) = excluded.\(column)
                    """,
                arguments: [sourceID, type.storageID, status.rawValue])
        }
    }

    /// Whether `source` may read `type`, checked inside the caller's read transaction.
    static func readStatus(source: String, type: SampleType, _ db: Database) throws -> AuthorizationStatus {
        let raw = try Int.fetchOne(
            db,
            sql: """
                SELECT a.readStatus FROM authorization a JOIN source s ON s.id = a.sourceId
                WHERE s.name = ? AND a.typeId = ?
                """,
            arguments: [source, type.storageID])
        return raw.flatMap(AuthorizationStatus.init(rawValue:)) ?? .notDetermined
    }

    /// The share status of `source` for `type` (`notDetermined` when never asked).
    public func authorizationStatus(source: String, type: SampleType) throws(HealthStoreError) -> AuthorizationStatus {
        try read { db in
            let raw = try Int.fetchOne(
                db,
                sql: """
                    SELECT a.shareStatus FROM authorization a JOIN source s ON s.id = a.sourceId
                    WHERE s.name = ? AND a.typeId = ?
                    """,
                arguments: [source, type.storageID])
            return raw.flatMap(AuthorizationStatus.init(rawValue:)) ?? .notDetermined
        }
    }

    /// Every recorded request and answer, by source then type.
    public func authorizations() throws(HealthStoreError) -> [AuthorizationEntry] {
        try read { db in
            let rows = try Row.fetchAll(
                db,
                sql: """
                    SELECT s.name, a.typeId, a.shareStatus, a.readStatus
                    FROM authorization a JOIN source s ON s.id = a.sourceId ORDER BY s.name, a.typeId
                    """)
            return rows.compactMap { row in
                guard let type = SampleType(storageID: row[1]) else { return nil }
                return AuthorizationEntry(
                    source: row[0], type: type,
                    share: AuthorizationStatus(rawValue: row[2]) ?? .notDetermined,
                    read: AuthorizationStatus(rawValue: row[3]) ?? .notDetermined)
            }
        }
    }

    // MARK: Transactions

    func write<T>(_ body: (Database) throws -> T) throws(HealthStoreError) -> T {
        try Self.run { try writer.write(body) }
    }

    func read<T>(_ body: (Database) throws -> T) throws(HealthStoreError) -> T {
        try Self.run { try writer.read(body) }
    }

    static func run<T>(_ body: () throws -> T) throws(HealthStoreError) -> T {
        do {
            return try body()
        } catch let error as HealthStoreError {
            throw error
        } catch let error as DatabaseError {
            throw .database(error.message ?? "\(error.resultCode)")
        } catch {
            throw .database("\(error)")
        }
    }

    static func upsertSource(_ source: HealthSource, _ db: Database) throws -> Int64 {
        try Int64.fetchOne(
            db,
            sql: """
                INSERT INTO source (name, version) VALUES (?, ?)
                ON CONFLICT (name) DO UPDATE SET version = COALESCE(excluded.version, version)
                RETURNING id
                """,
            arguments: [source.name, source.version])!
    }

    /// The share status, recording a `notDetermined` request when the source never asked.
    static func shareStatus(sourceID: Int64, type: SampleType, _ db: Database) throws -> AuthorizationStatus {
        if let raw = try Int.fetchOne(
            db, sql: "SELECT shareStatus FROM authorization WHERE sourceId = ? AND typeId = ?",
            arguments: [sourceID, type.storageID])
        {
            return AuthorizationStatus(rawValue: raw) ?? .notDetermined
        }
        try db.execute(
            sql: "INSERT INTO authorization (sourceId, typeId, shareStatus) VALUES (?, ?, 0)",
            arguments: [sourceID, type.storageID])
        return .notDetermined
    }

    // MARK: Opening

    private static func checkCanCreate(_ path: String) throws(HealthStoreError) {
        let directory = (path as NSString).deletingLastPathComponent
        let parent = directory.isEmpty ? "." : directory
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: parent, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw .cannotCreate(path: path, reason: "directory \(parent) does not exist")
        }
        guard access(parent, W_OK | X_OK) == 0 else {
            throw .cannotCreate(path: path, reason: "directory \(parent) is not writable (\(String(cString: strerror(errno))))")
        }
    }

    private static func classify(_ error: any Error, path: String, creating: Bool) -> HealthStoreError {
        guard let error = error as? DatabaseError else { return .cannotOpen(path: path, reason: "\(error)") }
        let reason = error.message ?? "\(error.resultCode)"
        switch error.resultCode {
        case .SQLITE_PERM, .SQLITE_READONLY, .SQLITE_AUTH:
            return .permissionDenied(path: path, reason: reason)
        case .SQLITE_CANTOPEN where access(path, R_OK | W_OK) != 0 && !creating:
            return .permissionDenied(path: path, reason: String(cString: strerror(errno)))
        case .SQLITE_NOTADB, .SQLITE_CORRUPT:
            return .cannotOpen(path: path, reason: "not an hrmd store (\(reason))")
        default:
            return creating ? .cannotCreate(path: path, reason: reason) : .cannotOpen(path: path, reason: reason)
        }
    }
}

extension HealthStoreError {
    fileprivate func withPath(_ path: String) -> HealthStoreError {
        if case .newerSchema = self { return .newerSchema(path: path) }
        return self
    }
}
