import GRDB

/// A look into a store file with SQLite itself, beside what hrmctl shows.
enum StoreFile {
    /// What `PRAGMA integrity_check` says: "ok", or the problems, one per line.
    static func integrityCheck(_ path: String) throws -> String {
        try DatabaseQueue(path: path).read { db in
            try String.fetchAll(db, sql: "PRAGMA integrity_check").joined(separator: "\n")
        }
    }

    /// The heart-rate samples the store holds, counted from its series chunks on a read-only
    /// connection (a full disk leaves no room for anything else).
    static func heartRateCount(_ path: String) throws -> Int {
        var configuration = Configuration()
        configuration.readonly = true
        return try DatabaseQueue(path: path, configuration: configuration).read { db in
            try Int.fetchOne(db, sql: "SELECT IFNULL(SUM(count), 0) FROM series WHERE typeId = 1") ?? 0
        }
    }

    /// The schema and every row of every table, as text: what a store holds, apart from the
    /// file's header (which opening a WAL database with GRDB touches, whatever it reads).
    static func contents(_ path: String) throws -> [String] {
        try DatabaseQueue(path: path).read { db in
            let tables = try Row.fetchAll(db, sql: "SELECT name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY name")
            var contents = tables.map { "\($0["name"] as String? ?? ""): \($0["sql"] as String? ?? "")" }
            for table in tables where (try? db.tableExists(table["name"] ?? "")) == true {
                let name: String = table["name"]
                contents += try Row.fetchAll(db, sql: "SELECT * FROM \(name.quotedDatabaseIdentifier)").map { "\(name) \($0)" }
            }
            return contents
        }
    }

    /// Records a migration as applied, as a newer hrmd that knows it would have.
    static func recordMigration(_ identifier: String, in path: String) throws {
        try DatabaseQueue(path: path).write { db in
            try db.execute(sql: "INSERT INTO grdb_migrations (identifier) VALUES (?)", arguments: [identifier])
        }
    }
}
