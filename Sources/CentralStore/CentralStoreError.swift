import PostgresClient

/// Why the central store could not be used, each as one line for the log and for hrmctl.
public enum CentralStoreError: Error, CustomStringConvertible, Sendable {
    /// PostgreSQL said no, or the connection failed; see `isTransient`.
    case postgres(PostgresError)
    /// The schema was made by a newer hrmd: this one writes nothing into it.
    case schemaNewer(found: Int, supported: Int)
    /// The schema is older than this hrmd and the role connected may not upgrade it.
    case schemaOutdated(found: Int, supported: Int, role: String)
    /// No `hrmd` schema, and the role connected may not create it.
    case schemaMissing(role: String, database: String)
    /// The database holds a schema `hrmd` that hrmd did not make, or other tables and no hrmd
    /// schema: it is not hrmd's, and hrmd leaves it alone.
    case foreignDatabase(database: String, reason: String)
    /// The gateway's name is registered to another role.
    case gatewayTaken(name: String, role: String, connectedAs: String)
    /// The central cursor is not where this batch starts (another process of the same
    /// gateway wrote, or a commit's answer was lost): read the cursor again and go on from it.
    case cursorMoved(type: String, expected: Int64, found: Int64)
    /// A reader found no hrmd schema in the database: no gateway has synced into it.
    case noCentralSchema(database: String)
    /// PostgreSQL does not know the time zone days are counted in.
    case unknownTimeZone(String)
    /// An analysis (zones, HRV, statistics) would read or answer more than one request may:
    /// the line that says which budget.
    case analysisTooLarge(String)

    public var description: String {
        switch self {
        case .postgres(let error):
            return "central store: \(error)"
        case .schemaNewer(let found, let supported):
            return "central store: schema version \(found) is newer than this hrmd knows (\(supported)); upgrade hrmd"
        case .schemaOutdated(let found, let supported, let role):
            return "central store: schema version \(found) needs upgrading to \(supported), and role \(role) may not;"
                + " connect once as the schema's owner to upgrade it"
        case .schemaMissing(let role, let database):
            return "central store: database \(database) has no hrmd schema, and role \(role) may not create it;"
                + " connect once as the owner meant for it (docs/central-store.md)"
        case .foreignDatabase(let database, let reason):
            return "central store: database \(database) is not hrmd's (\(reason)); give hrmd a database of its own"
        case .gatewayTaken(let name, let role, let connectedAs):
            return "central store: gateway \(name) belongs to role \(role), not \(connectedAs); connect as \(role) or name this gateway otherwise"
        case .cursorMoved(let type, let expected, let found):
            return "central store: the \(type) cursor is at \(found), not \(expected); going on from \(found)"
        case .noCentralSchema(let database):
            return "central store: database \(database) has no hrmd schema; no gateway has synced into it yet"
        case .unknownTimeZone(let zone):
            return "central store: PostgreSQL does not know the time zone \(zone); set TZ to a zone it knows"
        case .analysisTooLarge(let budget):
            return "central store: \(budget)"
        }
    }

    /// Whether trying again soon may succeed (the server restarting, the network, a full
    /// disk): the sync then retries with backoff; otherwise it retries slowly, since only a
    /// person can fix the cause.
    public var isTransient: Bool {
        switch self {
        case .postgres(let error): error.isTransient
        case .cursorMoved: true
        case .schemaNewer, .schemaOutdated, .schemaMissing, .foreignDatabase, .gatewayTaken, .noCentralSchema, .unknownTimeZone, .analysisTooLarge: false
        }
    }
}

extension CentralStoreError {
    /// Runs `body`, which answers with the store's own refusal as a failure, turning
    /// PostgreSQL's errors into the store's.
    static func running<T>(_ body: () throws(PostgresError) -> Result<T, CentralStoreError>) throws(CentralStoreError) -> T {
        let result: Result<T, CentralStoreError>
        do {
            result = try body()
        } catch {
            throw .postgres(error)
        }
        return try result.get()
    }
}
