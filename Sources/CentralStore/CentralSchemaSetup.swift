import PostgresClient

/// Brings a database's `hrmd` schema to `CentralSchema.currentVersion`, or says in one line
/// why it will not: a newer schema, a schema or database that is not hrmd's, a role that may
/// not create or upgrade it. Concurrent gateways are serialized by an advisory lock.
enum CentralSchemaSetup {
    /// Checks the schema and applies the missing migrations of `migrations`; returns the
    /// version the database is at.
    @discardableResult
    static func prepare(_ connection: PostgresConnection, migrations: [CentralSchema.Migration] = CentralSchema.migrations)
        throws(CentralStoreError) -> Int
    {
        let target = migrations.last?.version ?? 0
        return try CentralStoreError.running { () throws(PostgresError) -> Result<Int, CentralStoreError> in
            try connection.transaction { () throws(PostgresError) -> Result<Int, CentralStoreError> in
                _ = try connection.execute("SELECT pg_advisory_xact_lock($1, 0)", [String(CentralSchema.deviceLockClass)])
                let found: Int
                switch try inspect(connection) {
                case .failure(let error): return .failure(error)
                case .success(let version): found = version
                }
                if found > target { return .failure(.schemaNewer(found: found, supported: target)) }
                if found == target { return .success(found) }
                if found == 0 {
                    let mayCreate = try connection.execute(
                        "SELECT has_database_privilege(current_user, current_database(), 'CREATE')")
                    guard try mayCreate.bool(0, 0) else {
                        return .failure(.schemaMissing(role: connection.user, database: connection.database))
                    }
                    try connection.executeScript("""
                        CREATE SCHEMA hrmd;
                        CREATE TABLE hrmd.migration (
                            version integer PRIMARY KEY,
                            name text NOT NULL,
                            applied_at timestamptz NOT NULL DEFAULT now(),
                            applied_by name NOT NULL DEFAULT current_user
                        );
                        """)
                } else {
                    let owner = try connection.execute(
                        "SELECT pg_has_role(current_user, nspowner, 'USAGE') FROM pg_namespace WHERE nspname = 'hrmd'")
                    guard try owner.bool(0, 0) else {
                        return .failure(.schemaOutdated(found: found, supported: target, role: connection.user))
                    }
                }
                for migration in migrations where migration.version > found {
                    try connection.executeScript(migration.sql)
                    _ = try connection.execute(
                        "INSERT INTO hrmd.migration (version, name) VALUES ($1, $2)", [String(migration.version), migration.name])
                }
                return .success(target)
            }
        }
    }

    /// The schema's version (0: none), or why the database is not hrmd's.
    private static func inspect(_ connection: PostgresConnection) throws(PostgresError) -> Result<Int, CentralStoreError> {
        let schema = try connection.execute("""
            SELECT to_regclass('hrmd.migration') IS NOT NULL, to_regclass('hrmd.meta') IS NOT NULL
            FROM pg_namespace WHERE nspname = 'hrmd'
            """)
        guard schema.rowCount == 1 else {
            let tables = try connection.execute("""
                SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                WHERE c.relkind IN ('r', 'p', 'v', 'm', 'f')
                  AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\\_%'
                """)
            let count = try tables.int64(0, 0)
            return count == 0
                ? .success(0)
                : .failure(.foreignDatabase(database: connection.database, reason: "it holds \(count) tables and no hrmd schema"))
        }
        guard try schema.bool(0, 0), try schema.bool(0, 1) else {
            return .failure(.foreignDatabase(database: connection.database, reason: "its schema hrmd was not made by hrmd"))
        }
        let mark = try connection.execute("SELECT value FROM hrmd.meta WHERE key = 'application'")
        guard mark.rowCount == 1, mark.string(0, 0) == CentralSchema.applicationMark else {
            return .failure(.foreignDatabase(database: connection.database, reason: "its schema hrmd was not made by hrmd"))
        }
        let version = try connection.execute("SELECT coalesce(max(version), 0) FROM hrmd.migration")
        return .success(Int(try version.int64(0, 0)))
    }
}
