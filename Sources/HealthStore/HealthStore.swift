import HealthModel
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
        /// As `existingOnly`, for reading only: one read-only connection that never writes
        /// (not even the WAL set-up a pool does), so reading needs no write access and never
        /// waits for a writer. A store that needs upgrading is opened for writing once, to
        /// upgrade it.
        case readOnly
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

    /// SQLite's page cache for each connection of a process that keeps the store open for
    /// months (hrmd): appends and recent reads touch a few pages, and a bounded cache stops
    /// the resident memory from growing with the file (SQLite's default is 2 MiB a
    /// connection, filled as the file grows).
    public static let longRunningPageCacheKiB = 256

    /// Opens (and, if asked, creates) the store at `path`, upgrading an older schema in place;
    /// `upgradeProgress` hears how the conversion of an older store's samples goes.
    /// `pageCacheKiB` bounds SQLite's page cache of each connection (nil: SQLite's default).
    public static func open(
        path: String, mode: OpenMode, pageCacheKiB: Int? = nil, upgradeProgress: UpgradeProgress? = nil
    ) throws(HealthStoreError) -> HealthStore {
        let exists = FileManager.default.fileExists(atPath: path)
        if !exists {
            guard mode == .createIfMissing else { throw .missing(path: path) }
            try checkCanCreate(path)
            try createPrivately(path)
        }
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        configuration.foreignKeysEnabled = true
        configuration.label = "HealthStore"
        if let pageCacheKiB {
            configuration.prepareDatabase { try $0.execute(sql: "PRAGMA cache_size = -\(pageCacheKiB)") }
        }
        do {
            if mode == .readOnly {
                if let store = try openForReading(path: path, configuration: configuration) { return store }
            }
            if exists { try StoreIdentity.checkBeforeWriting(path: path, configuration: configuration) }
            do {
                let pool = try DatabasePool(path: path, configuration: configuration)
                return try HealthStore(writer: pool, path: path, upgradeProgress: upgradeProgress)
            } catch let error as DatabaseError where mode == .readOnly && error.resultCode == .SQLITE_READONLY {
                throw HealthStoreError.permissionDenied(
                    path: path,
                    reason: "its schema is older than this hrmd's, and it must be upgraded once by someone who may write it"
                        + " and its directory (\(error.message ?? "read-only"))")
            }
        } catch let error as HealthStoreError {
            throw error.withPath(path)
        } catch {
            throw classify(error, path: path, creating: !exists)
        }
    }

    /// The store at `path` on one read-only connection, or nil when it needs upgrading. A
    /// store in WAL mode needs its `-shm` file, which SQLite creates beside it; where it
    /// cannot (a backup in a directory of someone else's, read-only media) and no `-wal` file
    /// holds commits, the file is read as immutable: as it is, without locks.
    private static func openForReading(path: String, configuration: Configuration) throws -> HealthStore? {
        var configuration = configuration
        configuration.readonly = true
        let queue: DatabaseQueue
        do {
            queue = try DatabaseQueue(path: path, configuration: configuration)
            guard try isUpToDate(queue, path: path) else { return nil }
        } catch let error as DatabaseError where error.resultCode == .SQLITE_READONLY || error.resultCode == .SQLITE_CANTOPEN {
            let directory = (path as NSString).deletingLastPathComponent
            guard access(directory.isEmpty ? "." : directory, W_OK) != 0, !FileManager.default.fileExists(atPath: path + "-wal")
            else { throw error }
            let immutable = try DatabaseQueue(path: immutableURI(path), configuration: configuration)
            guard try isUpToDate(immutable, path: path) else { return nil }
            return HealthStore(upToDate: immutable, path: path)
        }
        return HealthStore(upToDate: queue, path: path)
    }

    /// `path` as an SQLite URI naming the file immutable.
    static func immutableURI(_ path: String) -> String {
        let absolute = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        var allowed = CharacterSet.urlPathAllowed
        allowed.remove(charactersIn: "?#%")
        return "file:" + (absolute.addingPercentEncoding(withAllowedCharacters: allowed) ?? absolute) + "?immutable=1"
    }

    /// Whether the store behind `reader` has every migration and nothing newer: it needs no
    /// write to be used.
    private static func isUpToDate(_ reader: any DatabaseReader, path: String?) throws -> Bool {
        let migrator = Schema.migrator
        return try reader.read { db in
            if try migrator.hasBeenSuperseded(db) { throw HealthStoreError.newerSchema(path: path ?? ":memory:") }
            return try migrator.hasCompletedMigrations(db) && Schema.typesRegistered(db)
        }
    }

    /// A store over any GRDB writer (an in-memory `DatabaseQueue` in tests). Runs migrations.
    public convenience init(writer: any DatabaseWriter) throws(HealthStoreError) {
        try self.init(writer: writer, path: nil, upgradeProgress: nil)
    }

    /// A store over a connection to a file that `isUpToDate` found needs no migration.
    private init(upToDate writer: any DatabaseWriter, path: String) {
        self.writer = writer
        self.path = path
    }

    private init(writer: any DatabaseWriter, path: String?, upgradeProgress: UpgradeProgress?) throws(HealthStoreError) {
        self.writer = writer
        self.path = path
        let migrator = Schema.makeMigrator(progress: upgradeProgress)
        try Self.run {
            // A store that is up to date opens without writing, so readers never wait for the writer.
            guard try !Self.isUpToDate(writer, path: path) else { return }
            let applied = try writer.read { try migrator.appliedIdentifiers($0) }
            try migrator.migrate(writer)
            try writer.write { try Schema.registerTypes($0) }
            // The conversion to series leaves the old rows' pages free: give them back.
            if applied.contains(Schema.core), !applied.contains(Schema.series) { try writer.vacuum() }
        }
    }

    // MARK: Transactions

    func write<T>(_ body: (Database) throws -> T) throws(HealthStoreError) -> T {
        try Self.run(path: path) { try writer.write(body) }
    }

    func read<T>(_ body: (Database) throws -> T) throws(HealthStoreError) -> T {
        try Self.run(path: path) { try writer.read(body) }
    }

    /// Runs `body`, its errors as `HealthStoreError`s; SQLite's finding that the file at
    /// `path` is damaged as `.damaged`.
    static func run<T>(path: String? = nil, _ body: () throws -> T) throws(HealthStoreError) -> T {
        do {
            return try body()
        } catch let error as HealthStoreError {
            throw error
        } catch let error as DatabaseError {
            if let path, error.resultCode == .SQLITE_CORRUPT {
                throw .damaged(path: path, reason: error.message ?? "\(error.resultCode)")
            }
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

    /// Creates the store's file empty with mode 0600 (whatever the umask), so that the store
    /// (tokens, the anchor secret, health data) is its owner's alone from the start; SQLite
    /// gives its `-wal` and `-shm` files the same mode. A file that appeared meanwhile is left
    /// to the checks that follow.
    private static func createPrivately(_ path: String) throws(HealthStoreError) {
        let descriptor = Glibc.open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            if errno == EEXIST { return }
            throw .cannotCreate(path: path, reason: String(cString: strerror(errno)))
        }
        close(descriptor)
    }

    private static func classify(_ error: any Error, path: String, creating: Bool) -> HealthStoreError {
        guard let error = error as? DatabaseError else { return .cannotOpen(path: path, reason: "\(error)") }
        let reason = error.message ?? "\(error.resultCode)"
        switch error.resultCode {
        case .SQLITE_PERM, .SQLITE_READONLY, .SQLITE_AUTH:
            return .permissionDenied(path: path, reason: reason)
        case .SQLITE_CANTOPEN where access(path, R_OK | W_OK) != 0 && !creating:
            return .permissionDenied(path: path, reason: String(cString: strerror(errno)))
        case .SQLITE_NOTADB:
            return .cannotOpen(path: path, reason: "not an hrmd store (\(reason))")
        case .SQLITE_CORRUPT:
            return .damaged(path: path, reason: reason)
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
