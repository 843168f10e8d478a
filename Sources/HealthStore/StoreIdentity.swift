import HealthModel
import Foundation
import GRDB

/// What an existing SQLite file is, told before anything is written to it: only an hrmd store
/// (or an empty file) may be created in or upgraded. Without this check, opening someone
/// else's database would add the store's tables to it, and a store whose write-ahead log is
/// another database's would be read through that log (SQLite cannot tell) and "upgraded" over
/// what the log shows, losing the store.
enum StoreIdentity: Equatable {
    /// No table yet: a new store may be made in it.
    case empty
    /// A store of this hrmd or an older one (its migrations table names the first migration).
    case healthStore
    /// Tables of another program.
    case other(tables: [String])

    init(_ db: Database) throws {
        let tables = try String.fetchAll(
            db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name")
        if tables.isEmpty {
            self = .empty
        } else if tables.contains("grdb_migrations"),
            try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM grdb_migrations WHERE identifier = ?)", arguments: [Schema.core]) == true
        {
            self = .healthStore
        } else {
            self = .other(tables: tables)
        }
    }

    /// Checks, on read-only connections, that the existing file at `path` may be created in,
    /// upgraded or written: an empty file, or a store whose structure SQLite finds whole
    /// (`PRAGMA quick_check`, which reads every page: 40 ms for 90 days of one strap at 1 Hz).
    /// Throws `.damaged` for a store with a damaged page, `.foreignWriteAheadLog` when
    /// the file alone is a store but what its `-wal` file makes of it is not, and `.cannotOpen`
    /// ("not an hrmd store") for another program's database. A file SQLite cannot open
    /// read-only here is left to the opening that follows to report.
    static func checkBeforeWriting(path: String, configuration: Configuration) throws {
        var configuration = configuration
        configuration.readonly = true
        let seen: StoreIdentity
        do {
            seen = try DatabaseQueue(path: path, configuration: configuration).read { db in
                let identity = try StoreIdentity(db)
                if identity == .healthStore, let problem = try String.fetchOne(db, sql: "PRAGMA quick_check(1)"), problem != "ok" {
                    throw HealthStoreError.damaged(path: path, reason: problem)
                }
                return identity
            }
        } catch let error as DatabaseError where error.resultCode == .SQLITE_READONLY || error.resultCode == .SQLITE_CANTOPEN {
            return
        }
        guard case .other(let tables) = seen else { return }
        let log = path + "-wal"
        if let size = try? FileManager.default.attributesOfItem(atPath: log)[.size] as? Int, size > 0,
            (try? DatabaseQueue(path: HealthStore.immutableURI(path), configuration: configuration).read(StoreIdentity.init)) == .healthStore
        {
            throw HealthStoreError.foreignWriteAheadLog(path: path)
        }
        throw HealthStoreError.cannotOpen(
            path: path,
            reason: "not an hrmd store: it holds another program's tables (\(tables.prefix(5).joined(separator: ", "))"
                + "\(tables.count > 5 ? ", …" : "")); nothing was written to it")
    }
}
