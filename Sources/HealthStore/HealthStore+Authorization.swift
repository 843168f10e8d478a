import HealthModel
import GRDB

extension HealthStore {
    /// Records that `source` wants to share `types` (a `notDetermined` request unless the user
    /// already answered) and returns the current share status of each.
    @discardableResult
    public func requestAuthorization(source: String, toShare types: [SampleType]) throws(HealthStoreError)
        -> [SampleType: AuthorizationStatus]
    {
        try Self.refuseShare(of: types, by: source)
        return try write { db in
            let sourceID = try Self.upsertSource(HealthSource(name: source), db)
            try Self.recordRequests(sourceID: sourceID, types: types, access: .share, db)
            var statuses: [SampleType: AuthorizationStatus] = [:]
            for type in types {
                statuses[type] = try Self.status(of: .share, sourceID: sourceID, type: type, db)
            }
            return statuses
        }
    }

    /// Records that `source` wants to share `toShare` and read `toRead` (HKHealthStore's
    /// requestAuthorization). Each becomes a pending request until the user answers; an answer
    /// already given is never changed, so a request grants nothing by itself.
    ///
    /// With a `quota`, a source that has no authorization record yet is refused
    /// (`.limitReached`) when its owner, or the store, already has as many sources with
    /// records as the quota allows; the check and the write are one transaction.
    public func requestAuthorization(
        source: String, toShare: [SampleType], toRead: [SampleType], quota: RequestQuota? = nil
    ) throws(HealthStoreError) {
        try Self.refuseShare(of: toShare, by: source)
        try write { db in
            if let quota { try Self.checkQuota(quota, for: source, db) }
            let sourceID = try Self.upsertSource(HealthSource(name: source), db)
            try Self.recordRequests(sourceID: sourceID, types: toShare, access: .share, db)
            try Self.recordRequests(sourceID: sourceID, types: toRead, access: .read, db)
        }
    }

    private static func checkQuota(_ quota: RequestQuota, for source: String, _ db: Database) throws {
        let known = try Bool.fetchOne(
            db, sql: "SELECT EXISTS (SELECT 1 FROM authorization a JOIN source s ON s.id = a.sourceId WHERE s.name = ?)",
            arguments: [source]) ?? false
        guard !known else { return }
        let owned = try Int.fetchOne(
            db,
            sql: """
                SELECT COUNT(DISTINCT a.sourceId) FROM authorization a JOIN source s ON s.id = a.sourceId
                WHERE substr(s.name, 1, ?) = ?
                """,
            arguments: [quota.owner.unicodeScalars.count, quota.owner]) ?? 0  // substr counts code points
        if owned >= quota.perOwner {
            throw HealthStoreError.limitReached(
                "\(quota.owner.dropLast()) already has \(owned) applications with authorization records, the most one user may have; use one of those names")
        }
        let all = try Int.fetchOne(db, sql: "SELECT COUNT(DISTINCT sourceId) FROM authorization") ?? 0
        if all >= quota.inAll {
            throw HealthStoreError.limitReached("the store has \(all) sources with authorization records, the most it keeps")
        }
    }

    /// Sets whether `source` may share `type`: the user's grant (`.sharingAuthorized`) or
    /// revoke (`.sharingDenied`). Takes effect from the source's next write.
    public func setShareAuthorization(_ status: AuthorizationStatus, source: String, type: SampleType)
        throws(HealthStoreError)
    {
        try setAuthorization(status, for: .share, source: source, type: type)
    }

    /// Sets whether `source` may read `type` (HealthKit's read authorization): a query that
    /// names the source as its reader sees other sources' samples only when this is
    /// `.sharingAuthorized`.
    public func setReadAuthorization(_ status: AuthorizationStatus, source: String, type: SampleType)
        throws(HealthStoreError)
    {
        try setAuthorization(status, for: .read, source: source, type: type)
    }

    /// Sets the user's answer for one kind of access. `.notDetermined` withdraws the answer:
    /// a request made before shows as pending again.
    public func setAuthorization(_ status: AuthorizationStatus, for access: AuthorizationAccess, source: String, type: SampleType)
        throws(HealthStoreError)
    {
        let column = access.statusColumn
        if access == .share, status == .sharingAuthorized { try Self.refuseShare(of: [type], by: source) }
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

    /// The share status of `source` for `type` (`notDetermined` when never asked).
    public func authorizationStatus(source: String, type: SampleType) throws(HealthStoreError) -> AuthorizationStatus {
        try read { db in try Self.status(of: .share, source: source, type: type, db) }
    }

    /// Whether `source` may read other sources' samples of `type` (`notDetermined` when never
    /// answered). For the store's managers only: HealthKit never tells an application.
    public func readStatus(source: String, type: SampleType) throws(HealthStoreError) -> AuthorizationStatus {
        try read { db in try Self.status(of: .read, source: source, type: type, db) }
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

    /// Every answer and every pending request (requested, still `notDetermined`), one entry
    /// per source, type and access, in that order (share before read). An access never
    /// requested nor answered is not listed.
    public func authorizationAccessEntries() throws(HealthStoreError) -> [AuthorizationAccessEntry] {
        try read { db in
            let rows = try Row.fetchAll(
                db,
                sql: """
                    SELECT s.name, a.typeId, 0 AS access, a.shareStatus FROM authorization a JOIN source s ON s.id = a.sourceId
                    WHERE a.shareStatus <> 0 OR a.shareRequested = 1
                    UNION ALL
                    SELECT s.name, a.typeId, 1 AS access, a.readStatus FROM authorization a JOIN source s ON s.id = a.sourceId
                    WHERE a.readStatus <> 0 OR a.readRequested = 1
                    ORDER BY 1, 2, 3
                    """)
            return rows.compactMap { row in
                guard let type = SampleType(storageID: row[1]) else { return nil }
                let access: Int = row[2]
                return AuthorizationAccessEntry(
                    source: row[0], type: type, access: access == 0 ? .share : .read,
                    status: AuthorizationStatus(rawValue: row[3]) ?? .notDetermined)
            }
        }
    }

    // MARK: Inside transactions

    /// Marks `types` as requested for `access`, leaving any answer as it is.
    /// Refuses a share `source` may not be granted: an event type to anyone but hrmd.
    private static func refuseShare(of types: [SampleType], by source: String) throws(HealthStoreError) {
        guard let refused = types.first(where: { !$0.mayBeShared(by: source) }) else { return }
        throw .conflict("\(refused.identifier) is written by \(HealthSource.eventWriter) alone; other sources may only read it")
    }

    static func recordRequests(sourceID: Int64, types: [SampleType], access: AuthorizationAccess, _ db: Database) throws {
        let column = access.requestedColumn
        for type in types {
            try db.execute(
                sql: """
                    INSERT INTO authorization (sourceId, typeId, \(column)) VALUES (?, ?, 1)
                    ON CONFLICT (sourceId, typeId) DO UPDATE SET \(column) = 1
                    """,
                arguments: [sourceID, type.storageID])
        }
    }

    /// The status of one access, read inside the caller's transaction.
    static func status(of access: AuthorizationAccess, sourceID: Int64, type: SampleType, _ db: Database) throws
        -> AuthorizationStatus
    {
        let raw = try Int.fetchOne(
            db, sql: "SELECT \(access.statusColumn) FROM authorization WHERE sourceId = ? AND typeId = ?",
            arguments: [sourceID, type.storageID])
        return raw.flatMap(AuthorizationStatus.init(rawValue:)) ?? .notDetermined
    }

    /// The status of one access by source name, read inside the caller's transaction.
    static func status(of access: AuthorizationAccess, source: String, type: SampleType, _ db: Database) throws
        -> AuthorizationStatus
    {
        let raw = try Int.fetchOne(
            db,
            sql: """
                SELECT a.\(access.statusColumn) FROM authorization a JOIN source s ON s.id = a.sourceId
                WHERE s.name = ? AND a.typeId = ?
                """,
            arguments: [source, type.storageID])
        return raw.flatMap(AuthorizationStatus.init(rawValue:)) ?? .notDetermined
    }

    /// The share status for a save, recording a `notDetermined` request when the source had
    /// not asked: writing a type is asking to share it.
    static func shareStatusRequesting(sourceID: Int64, type: SampleType, _ db: Database) throws -> AuthorizationStatus {
        if let row = try Row.fetchOne(
            db.cachedStatement(sql: "SELECT shareStatus, shareRequested FROM authorization WHERE sourceId = ? AND typeId = ?"),
            arguments: [sourceID, type.storageID])
        {
            let status = AuthorizationStatus(rawValue: row[0]) ?? .notDetermined
            let requested: Bool = row[1]
            if status == .notDetermined && !requested {
                try recordRequests(sourceID: sourceID, types: [type], access: .share, db)
            }
            return status
        }
        try recordRequests(sourceID: sourceID, types: [type], access: .share, db)
        return .notDetermined
    }
}

extension AuthorizationAccess {
    /// The `authorization` column that holds the user's answer.
    var statusColumn: String { self == .share ? "shareStatus" : "readStatus" }
    /// The `authorization` column that says whether the source asked.
    var requestedColumn: String { self == .share ? "shareRequested" : "readRequested" }
}

