import CPostgreSQL
import Glibc

/// libpq, loaded when the first connection is made rather than linked: a program that never
/// connects to PostgreSQL (hrmctl on a local store, hrmd without `[sync]`) never loads it, nor
/// the dozen libraries it needs (Kerberos, LDAP, TLS). Each function PostgresClient uses is
/// one typed entry, its C signature as libpq-fe.h declares it (the header gives the types and
/// constants; nothing links the library).
final class LibPQ: Sendable {
    /// The library's file name: its soname, as Debian's libpq5 installs it.
    static let fileName = "libpq.so.5"

    let connectStartParams: @convention(c) (
        UnsafePointer<UnsafePointer<CChar>?>?, UnsafePointer<UnsafePointer<CChar>?>?, Int32
    ) -> OpaquePointer?
    let connectPoll: @convention(c) (OpaquePointer?) -> PostgresPollingStatusType
    let status: @convention(c) (OpaquePointer?) -> ConnStatusType
    let finish: @convention(c) (OpaquePointer?) -> Void
    let setNonBlocking: @convention(c) (OpaquePointer?, Int32) -> Int32
    let serverVersion: @convention(c) (OpaquePointer?) -> Int32
    let backendPID: @convention(c) (OpaquePointer?) -> Int32
    let user: @convention(c) (OpaquePointer?) -> UnsafeMutablePointer<CChar>?
    let database: @convention(c) (OpaquePointer?) -> UnsafeMutablePointer<CChar>?
    let errorMessage: @convention(c) (OpaquePointer?) -> UnsafeMutablePointer<CChar>?
    let socket: @convention(c) (OpaquePointer?) -> Int32
    let sendQuery: @convention(c) (OpaquePointer?, UnsafePointer<CChar>?) -> Int32
    let sendQueryParams: @convention(c) (
        OpaquePointer?, UnsafePointer<CChar>?, Int32, UnsafePointer<Oid>?, UnsafePointer<UnsafePointer<CChar>?>?,
        UnsafePointer<Int32>?, UnsafePointer<Int32>?, Int32
    ) -> Int32
    let putCopyData: @convention(c) (OpaquePointer?, UnsafePointer<CChar>?, Int32) -> Int32
    let putCopyEnd: @convention(c) (OpaquePointer?, UnsafePointer<CChar>?) -> Int32
    let flush: @convention(c) (OpaquePointer?) -> Int32
    let consumeInput: @convention(c) (OpaquePointer?) -> Int32
    let isBusy: @convention(c) (OpaquePointer?) -> Int32
    let getResult: @convention(c) (OpaquePointer?) -> OpaquePointer?
    let notifies: @convention(c) (OpaquePointer?) -> UnsafeMutablePointer<PGnotify>?
    let freeMemory: @convention(c) (UnsafeMutableRawPointer?) -> Void
    let getCancel: @convention(c) (OpaquePointer?) -> OpaquePointer?
    let freeCancel: @convention(c) (OpaquePointer?) -> Void
    let cancel: @convention(c) (OpaquePointer?, UnsafeMutablePointer<CChar>?, Int32) -> Int32
    // Results.
    let resultStatus: @convention(c) (OpaquePointer?) -> ExecStatusType
    let resultErrorMessage: @convention(c) (OpaquePointer?) -> UnsafeMutablePointer<CChar>?
    let resultErrorField: @convention(c) (OpaquePointer?, Int32) -> UnsafeMutablePointer<CChar>?
    let clear: @convention(c) (OpaquePointer?) -> Void
    let tupleCount: @convention(c) (OpaquePointer?) -> Int32
    let fieldCount: @convention(c) (OpaquePointer?) -> Int32
    let commandTuples: @convention(c) (OpaquePointer?) -> UnsafeMutablePointer<CChar>?
    let commandStatus: @convention(c) (OpaquePointer?) -> UnsafeMutablePointer<CChar>?
    let fieldName: @convention(c) (OpaquePointer?, Int32) -> UnsafeMutablePointer<CChar>?
    let getIsNull: @convention(c) (OpaquePointer?, Int32, Int32) -> Int32
    let getValue: @convention(c) (OpaquePointer?, Int32, Int32) -> UnsafeMutablePointer<CChar>?
    let getLength: @convention(c) (OpaquePointer?, Int32, Int32) -> Int32
    // Connection strings.
    let conninfoParse: @convention(c) (
        UnsafePointer<CChar>?, UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
    ) -> UnsafeMutablePointer<PQconninfoOption>?
    let conninfoFree: @convention(c) (UnsafeMutablePointer<PQconninfoOption>?) -> Void

    /// The library, loaded the first time one asks (once for the process; it stays loaded).
    /// Throws `.connectionFailed` naming the library when it cannot be loaded.
    static func load() throws(PostgresError) -> LibPQ { try loaded.get() }

    private static let loaded = Result { () throws(PostgresError) in try LibPQ(fileName: fileName) }

    private init(fileName: String) throws(PostgresError) {
        guard let library = dlopen(fileName, RTLD_NOW | RTLD_LOCAL) else {
            throw .connectionFailed("cannot load libpq: \(Self.lastError())")
        }
        /// The function `name`, as its entry's type.
        func function<T>(_ name: String) throws(PostgresError) -> T {
            guard let address = dlsym(library, name) else { throw .connectionFailed("cannot load libpq: \(fileName) has no \(name)") }
            return unsafeBitCast(address, to: T.self)
        }
        connectStartParams = try function("PQconnectStartParams")
        connectPoll = try function("PQconnectPoll")
        status = try function("PQstatus")
        finish = try function("PQfinish")
        setNonBlocking = try function("PQsetnonblocking")
        serverVersion = try function("PQserverVersion")
        backendPID = try function("PQbackendPID")
        user = try function("PQuser")
        database = try function("PQdb")
        errorMessage = try function("PQerrorMessage")
        socket = try function("PQsocket")
        sendQuery = try function("PQsendQuery")
        sendQueryParams = try function("PQsendQueryParams")
        putCopyData = try function("PQputCopyData")
        putCopyEnd = try function("PQputCopyEnd")
        flush = try function("PQflush")
        consumeInput = try function("PQconsumeInput")
        isBusy = try function("PQisBusy")
        getResult = try function("PQgetResult")
        notifies = try function("PQnotifies")
        freeMemory = try function("PQfreemem")
        getCancel = try function("PQgetCancel")
        freeCancel = try function("PQfreeCancel")
        cancel = try function("PQcancel")
        resultStatus = try function("PQresultStatus")
        resultErrorMessage = try function("PQresultErrorMessage")
        resultErrorField = try function("PQresultErrorField")
        clear = try function("PQclear")
        tupleCount = try function("PQntuples")
        fieldCount = try function("PQnfields")
        commandTuples = try function("PQcmdTuples")
        commandStatus = try function("PQcmdStatus")
        fieldName = try function("PQfname")
        getIsNull = try function("PQgetisnull")
        getValue = try function("PQgetvalue")
        getLength = try function("PQgetlength")
        conninfoParse = try function("PQconninfoParse")
        conninfoFree = try function("PQconninfoFree")
    }

    /// The text libpq returns a pointer to ("" for none).
    static func text(_ pointer: UnsafeMutablePointer<CChar>?) -> String {
        pointer.map { String(cString: $0) } ?? ""
    }

    private static func lastError() -> String {
        dlerror().map { String(cString: $0) } ?? "\(fileName): unknown error"
    }
}
