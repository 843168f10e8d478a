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
    /// Who hears of committed changes (`observeChanges`).
    let changeObservers = ChangeObservers()
    /// What saves remember from one to the next.
    let writeCache = WriteCache()

    /// How far the upgrade of an older store has come: samples converted, samples in all.
    public typealias UpgradeProgress = @Sendable (_ done: Int, _ total: Int) -> Void

    /// Opens (and, if asked, creates) the store at `path`, upgrading an older schema in place;
    /// `upgradeProgress` hears how the conversion of an older store's samples goes.
    public static func open(path: String, mode: OpenMode, upgradeProgress: UpgradeProgress? = nil) throws(HealthStoreError)
        -> HealthStore
    {
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
            return try HealthStore(writer: pool, path: path, upgradeProgress: upgradeProgress)
        } catch let error as HealthStoreError {
            throw error.withPath(path)
        } catch {
            throw classify(error, path: path, creating: !exists)
        }
    }

    /// A store over any GRDB writer (an in-memory `DatabaseQueue` in tests). Runs migrations.
    public convenience init(writer: any DatabaseWriter) throws(HealthStoreError) {
        try self.init(writer: writer, path: nil, upgradeProgress: nil)
    }

    private init(writer: any DatabaseWriter, path: String?, upgradeProgress: UpgradeProgress?) throws(HealthStoreError) {
        self.writer = writer
        self.path = path
        let migrator = Schema.makeMigrator(progress: upgradeProgress)
        try Self.run {
            let (applied, complete) = try writer.read { db in
                if try migrator.hasBeenSuperseded(db) { throw HealthStoreError.newerSchema(path: path ?? ":memory:") }
                return (try migrator.appliedIdentifiers(db), try migrator.hasCompletedMigrations(db) && Schema.typesRegistered(db))
            }
            // A store that is up to date opens without writing, so readers never wait for the writer.
            guard !complete else { return }
            try migrator.migrate(writer)
            try writer.write { try Schema.registerTypes($0) }
            // The conversion to series leaves the old rows' pages free: give them back.
            if applied.contains(Schema.core), !applied.contains(Schema.series) { try writer.vacuum() }
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
