import CPostgreSQL
import Glibc

/// One connection to PostgreSQL through libpq. Used by one thread at a time; `@unchecked
/// Sendable` so that it can move between threads.
///
/// Every call runs under a deadline (its `timeout`, or the one the connection was opened
/// with): a peer that stops answering without closing (a blackholed proxy) does not hang the
/// thread. When the deadline passes, the running statement is cancelled (one bounded try), the
/// connection is closed and `.timedOut` thrown. After that, or any other failure of the
/// connection itself, the connection stays closed: every later call throws `.connectionLost`.
public final class PostgresConnection: @unchecked Sendable {
    private let pq: LibPQ
    private var handle: OpaquePointer?
    private var closedReason = "the connection was closed"
    /// The deadline of calls given no timeout of their own: the connect timeout.
    public let defaultTimeout: Duration
    /// The server's version as libpq reports it, such as 150013 for 15.13.
    public let serverVersion: Int
    /// The process ID of the server process serving this connection.
    public let backendPID: Int
    /// The user the connection logged in as.
    public let user: String
    /// The database the connection is to.
    public let database: String

    /// How long a cancel request after a timeout may take before it is given up.
    static let cancelBound: Duration = .seconds(1)

    /// Connects within `timeout`. `conninfo` is a libpq connection string: a URI
    /// (`postgresql://user@host:5432/db?sslmode=verify-full`), `key=value` pairs
    /// (`host=/run/postgresql dbname=hrmd`), or `service=NAME` from pg_service.conf. What it
    /// does not say comes from the PG* environment, the service file, ~/.pgpass (or PGPASSFILE)
    /// and libpq's defaults, as for psql.
    ///
    /// Added unless the string sets them: `connect_timeout` (the timeout, in whole seconds),
    /// TCP keepalives (`keepalives=1`, idle 5 s, interval 2 s, 3 probes), `tcp_user_timeout`
    /// (the timeout) and `fallback_application_name=hrmd`. These are given ahead of the string,
    /// so the string's own values win; a service file's values for these keys are overridden,
    /// as libpq only fills from a service file what is still unset. A host name is resolved
    /// synchronously by libpq; the rest of the connect obeys the deadline.
    ///
    /// libpq is loaded by the first connection (`LibPQ`); when it cannot be, this throws
    /// `.connectionFailed` naming it.
    public init(conninfo: String, timeout: Duration) throws(PostgresError) {
        let pq = try LibPQ.load()
        self.pq = pq
        let deadline = Deadline(after: timeout)
        defaultTimeout = timeout
        let options: [(String, String)] = [
            ("fallback_application_name", "hrmd"),
            ("connect_timeout", String(timeout.wholeSeconds(atLeast: 2))),
            ("keepalives", "1"),
            ("keepalives_idle", "5"),
            ("keepalives_interval", "2"),
            ("keepalives_count", "3"),
            ("tcp_user_timeout", String(timeout.wholeMilliseconds)),
            // Last, so that what the caller's string sets overrides the defaults above.
            ("dbname", conninfo),
        ]
        let connection = CStrings.with(options.map(\.0)) { keywords in
            CStrings.with(options.map(\.1)) { values in pq.connectStartParams(keywords, values, 1) }
        }
        guard let connection else { throw .connectionFailed("libpq could not allocate a connection") }
        do {
            try Self.finishConnecting(connection, pq: pq, before: deadline)
        } catch {
            pq.finish(connection)
            throw error
        }
        pq.setNonBlocking(connection, 1)
        handle = connection
        serverVersion = Int(pq.serverVersion(connection))
        backendPID = Int(pq.backendPID(connection))
        user = pq.user(connection).map { String(cString: $0) } ?? ""
        database = pq.database(connection).map { String(cString: $0) } ?? ""
    }

    deinit {
        if let handle { pq.finish(handle) }
    }

    /// Whether the connection is still open (not closed, lost or timed out).
    public var isOpen: Bool { handle != nil }

    /// Closes the connection; later calls throw `.connectionLost`. Closing twice does nothing.
    public func close() { close(reason: "the connection was closed") }

    // MARK: Statements

    /// Runs one statement with text parameters `$1`, `$2`, … (nil is NULL) and returns its
    /// rows in text format. Throws `.server` for the server's error, `.timedOut` past the
    /// deadline, `.connectionLost` when the connection breaks or was closed, and `.nulInText`
    /// (sending nothing) for a parameter holding a NUL, which libpq would otherwise cut short.
    @discardableResult
    public func execute(_ sql: String, _ parameters: [String?] = [], timeout: Duration? = nil) throws(PostgresError) -> PostgresResult {
        if let index = parameters.firstIndex(where: { $0?.utf8.contains(0) == true }) { throw .nulInText(parameter: index + 1) }
        let connection = try open()
        let deadline = Deadline(after: timeout ?? defaultTimeout)
        let sent = CStrings.with(parameters) { values in
            pq.sendQueryParams(connection, sql, Int32(parameters.count), nil, values, nil, nil, 0)
        }
        let results = try finish(connection, sent: sent, before: deadline)
        guard let last = results.last else { throw lost(connection, "the server sent no result") }
        return last
    }

    /// Runs several statements separated by semicolons, without parameters (the simple query
    /// protocol: as one implicit transaction unless they say otherwise). Throws the first
    /// statement's error; the statements after it do not run.
    public func executeScript(_ sql: String, timeout: Duration? = nil) throws(PostgresError) {
        let connection = try open()
        let deadline = Deadline(after: timeout ?? defaultTimeout)
        _ = try finish(connection, sent: pq.sendQuery(connection, sql), before: deadline)
    }

    /// Runs `body` between BEGIN and COMMIT. When `body` throws (or COMMIT fails), the
    /// transaction is rolled back if the connection still works, and the error rethrown.
    /// A transaction that COMMIT turns into a rollback (a statement in it failed and `body`
    /// went on) throws `.server` with SQLSTATE 25P02.
    public func transaction<T>(_ body: () throws(PostgresError) -> T) throws(PostgresError) -> T {
        try execute("BEGIN")
        do throws(PostgresError) {
            let value = try body()
            let commit = try execute("COMMIT")
            if commit.commandStatus == "ROLLBACK" {
                throw PostgresError.server(
                    sqlState: "25P02", message: "the transaction was rolled back: a statement in it failed", detail: nil, hint: nil)
            }
            return value
        } catch {
            if isOpen { _ = try? execute("ROLLBACK") }
            throw error
        }
    }

    // MARK: COPY

    /// Runs `COPY … FROM STDIN` (text format) and sends `rows`, one row per element without its
    /// newline (see `PostgresCopyText`), in large buffers. Returns how many rows were copied.
    /// A row the server refuses ends the COPY with `.server`, and nothing is copied.
    @discardableResult
    public func copyIn(_ sql: String, rows: some Sequence<String>, timeout: Duration? = nil) throws(PostgresError) -> Int {
        let connection = try open()
        let deadline = Deadline(after: timeout ?? defaultTimeout)
        try sendAndFlush(connection, sent: pq.sendQuery(connection, sql), before: deadline)
        let started = try collect(connection, before: deadline, stopAtCopyIn: true)
        guard started.copying else {
            try Self.throwFirstError(started.results)
            throw .copyFailed("the statement is not COPY … FROM STDIN")
        }
        var buffer: [UInt8] = []
        let bufferSize = 1 << 18
        buffer.reserveCapacity(bufferSize + 4096)
        var accepting = true
        for row in rows where accepting {
            buffer.append(contentsOf: row.utf8)
            buffer.append(0x0A)
            if buffer.count >= bufferSize {
                accepting = try putCopyData(connection, buffer, before: deadline)
                buffer.removeAll(keepingCapacity: true)
            }
        }
        if accepting, !buffer.isEmpty { accepting = try putCopyData(connection, buffer, before: deadline) }
        if accepting { try putCopyEnd(connection, before: deadline) }
        try flush(connection, before: deadline)
        let results = try collect(connection, before: deadline, stopAtCopyIn: false).results
        try Self.throwFirstError(results)
        return results.last?.affectedRows ?? 0
    }

    /// Queues one buffer of COPY data; false when the server left COPY mode (its error
    /// follows among the results).
    private func putCopyData(_ connection: OpaquePointer, _ buffer: [UInt8], before deadline: Deadline) throws(PostgresError) -> Bool {
        while true {
            let result = buffer.withUnsafeBytes { bytes in
                pq.putCopyData(connection, bytes.baseAddress?.assumingMemoryBound(to: CChar.self), Int32(bytes.count))
            }
            if result == 1 {
                if pq.flush(connection) < 0 { throw lost(connection, "sending COPY data failed") }
                return true
            }
            if result < 0 {
                if pq.status(connection) == CONNECTION_OK { return false }
                throw lost(connection, "sending COPY data failed")
            }
            try awaitSocket(connection, for: Int16(POLLOUT | POLLIN), before: deadline)
        }
    }

    /// Ends COPY data, or with `failing`, aborts the COPY with that message.
    private func putCopyEnd(_ connection: OpaquePointer, failing: String? = nil, before deadline: Deadline) throws(PostgresError) {
        while true {
            let result = pq.putCopyEnd(connection, failing)
            if result == 1 { return }
            if result < 0 {
                if pq.status(connection) == CONNECTION_OK { return }
                throw lost(connection, "ending COPY failed")
            }
            try awaitSocket(connection, for: Int16(POLLOUT | POLLIN), before: deadline)
        }
    }

    // MARK: LISTEN/NOTIFY

    /// Subscribes this connection to a channel (LISTEN; the name is quoted as given).
    public func listen(_ channel: String) throws(PostgresError) {
        try execute("LISTEN \(Self.quoteIdentifier(channel))")
    }

    /// Ends the subscription to a channel (UNLISTEN).
    public func unlisten(_ channel: String) throws(PostgresError) {
        try execute("UNLISTEN \(Self.quoteIdentifier(channel))")
    }

    /// Sends a notification on a channel (pg_notify), delivered when the transaction commits.
    public func notify(_ channel: String, payload: String = "") throws(PostgresError) {
        try execute("SELECT pg_notify($1, $2)", [channel, payload])
    }

    /// The notifications received for the channels this connection listens to: returns as
    /// soon as there is at least one (those that came during earlier statements first), or
    /// an empty array when `waitingUpTo` passes without any.
    public func notifications(waitingUpTo timeout: Duration) throws(PostgresError) -> [PostgresNotification] {
        let connection = try open()
        let deadline = Deadline(after: timeout)
        if pq.consumeInput(connection) == 0 { throw lost(connection, "reading from the server failed") }
        var found = Self.takeNotifications(connection, pq: pq)
        while found.isEmpty {
            guard SocketWait.ready(pq.socket(connection), for: Int16(POLLIN), before: deadline) else { break }
            if pq.consumeInput(connection) == 0 { throw lost(connection, "reading from the server failed") }
            found = Self.takeNotifications(connection, pq: pq)
        }
        return found
    }

    private static func takeNotifications(_ connection: OpaquePointer, pq: LibPQ) -> [PostgresNotification] {
        var found: [PostgresNotification] = []
        while let notice = pq.notifies(connection) {
            found.append(
                PostgresNotification(
                    channel: String(cString: notice.pointee.relname), payload: String(cString: notice.pointee.extra),
                    backendPID: Int(notice.pointee.be_pid)))
            pq.freeMemory(notice)
        }
        return found
    }

    /// An SQL identifier in double quotes, its double quotes doubled.
    public static func quoteIdentifier(_ name: String) -> String {
        "\"" + name.replacingAll("\"", with: "\"\"") + "\""
    }

    // MARK: The protocol under a deadline

    private func open() throws(PostgresError) -> OpaquePointer {
        guard let handle else { throw .connectionLost(closedReason) }
        return handle
    }

    private func close(reason: String) {
        guard let handle else { return }
        pq.finish(handle)
        self.handle = nil
        closedReason = reason
    }

    /// Closes the connection after it failed and returns the error to throw: libpq's message,
    /// or `fallback` when it has none.
    private func lost(_ connection: OpaquePointer, _ fallback: String) -> PostgresError {
        let message = PostgresError.oneLine(LibPQ.text(pq.errorMessage(connection)))
        let reason = message.isEmpty ? fallback : message
        close(reason: reason)
        return .connectionLost(reason)
    }

    /// Cancels what runs (one try, bounded), closes the connection and returns `.timedOut`.
    private func timedOut(_ connection: OpaquePointer) -> PostgresError {
        BoundedCancel.cancel(connection, pq: pq, within: Self.cancelBound)
        close(reason: "closed after a statement timed out")
        return .timedOut
    }

    /// Waits until the socket is ready for `events`, and reads what arrived (as libpq asks of
    /// a caller that waits to write).
    private func awaitSocket(_ connection: OpaquePointer, for events: Int16, before deadline: Deadline) throws(PostgresError) {
        guard SocketWait.ready(pq.socket(connection), for: events, before: deadline) else { throw timedOut(connection) }
        if pq.consumeInput(connection) == 0 { throw lost(connection, "reading from the server failed") }
    }

    private func sendAndFlush(_ connection: OpaquePointer, sent: Int32, before deadline: Deadline) throws(PostgresError) {
        guard sent == 1 else { throw lost(connection, "sending the statement failed") }
        try flush(connection, before: deadline)
    }

    private func flush(_ connection: OpaquePointer, before deadline: Deadline) throws(PostgresError) {
        while true {
            let result = pq.flush(connection)
            if result == 0 { return }
            if result < 0 { throw lost(connection, "sending to the server failed") }
            try awaitSocket(connection, for: Int16(POLLOUT | POLLIN), before: deadline)
        }
    }

    /// Sends, waits for every result of what was sent, and throws the first error among them.
    private func finish(_ connection: OpaquePointer, sent: Int32, before deadline: Deadline) throws(PostgresError) -> [PostgresResult] {
        try sendAndFlush(connection, sent: sent, before: deadline)
        let results = try collect(connection, before: deadline, stopAtCopyIn: false).results
        try Self.throwFirstError(results)
        return results
    }

    /// Reads results until libpq has no more (or, with `stopAtCopyIn`, until the server waits
    /// for COPY data). A COPY that only `copyIn` may run is refused here.
    private func collect(
        _ connection: OpaquePointer, before deadline: Deadline, stopAtCopyIn: Bool
    ) throws(PostgresError) -> (results: [PostgresResult], copying: Bool) {
        var results: [PostgresResult] = []
        while true {
            if pq.isBusy(connection) == 0 {
                guard let raw = pq.getResult(connection) else { break }
                let status = pq.resultStatus(raw)
                if status == PGRES_COPY_IN {
                    pq.clear(raw)
                    if stopAtCopyIn { return (results, true) }
                    try putCopyEnd(connection, failing: "COPY FROM STDIN is run with copyIn", before: deadline)
                    try flush(connection, before: deadline)
                    continue
                }
                if status == PGRES_COPY_OUT || status == PGRES_COPY_BOTH {
                    pq.clear(raw)
                    throw lost(connection, "COPY TO STDOUT is not supported")
                }
                results.append(PostgresResult(raw, pq: pq))
                continue
            }
            try awaitSocket(connection, for: Int16(POLLIN), before: deadline)
        }
        if pq.status(connection) == CONNECTION_BAD { throw lost(connection, "the server closed the connection") }
        return (results, false)
    }

    private static func throwFirstError(_ results: [PostgresResult]) throws(PostgresError) {
        for result in results {
            if let error = result.error { throw error }
        }
    }

    // MARK: Connecting

    private static func finishConnecting(_ connection: OpaquePointer, pq: LibPQ, before deadline: Deadline) throws(PostgresError) {
        if pq.status(connection) == CONNECTION_BAD { throw connectError(connection, pq: pq) }
        var state = PGRES_POLLING_WRITING
        while true {
            switch state {
            case PGRES_POLLING_OK:
                return
            case PGRES_POLLING_FAILED:
                throw connectError(connection, pq: pq)
            default:
                let socket = pq.socket(connection)
                guard socket >= 0 else { throw connectError(connection, pq: pq) }
                let events = state == PGRES_POLLING_READING ? Int16(POLLIN) : Int16(POLLOUT)
                guard SocketWait.ready(socket, for: events, before: deadline) else { throw .timedOut }
            }
            state = pq.connectPoll(connection)
        }
    }

    private static func connectError(_ connection: OpaquePointer, pq: LibPQ) -> PostgresError {
        let message = PostgresError.oneLine(LibPQ.text(pq.errorMessage(connection)))
        return .connectionFailed(message.isEmpty ? "libpq gave no reason" : message)
    }
}

/// A notification (NOTIFY or pg_notify) on a channel the connection listens to.
public struct PostgresNotification: Sendable, Equatable {
    public var channel: String
    public var payload: String
    /// The server process that sent it.
    public var backendPID: Int

    public init(channel: String, payload: String, backendPID: Int) {
        self.channel = channel
        self.payload = payload
        self.backendPID = backendPID
    }
}

extension PostgresResult {
    /// The server's error this result carries, if it is one.
    var error: PostgresError? {
        let status = resultStatus
        guard status == PGRES_FATAL_ERROR || status == PGRES_BAD_RESPONSE || status == PGRES_NONFATAL_ERROR else { return nil }
        let message = field(DiagnosticField.message) ?? PostgresError.oneLine(errorMessage)
        return .server(sqlState: field(DiagnosticField.sqlState) ?? "", message: message, detail: field(DiagnosticField.detail), hint: field(DiagnosticField.hint))
    }
}

extension String {
    fileprivate func replacingAll(_ target: Character, with replacement: String) -> String {
        var result = ""
        for character in self {
            if character == target { result += replacement } else { result.append(character) }
        }
        return result
    }
}

/// PostgreSQL's error fields (postgres_ext.h's PG_DIAG_* character codes, which Swift does not import).
enum DiagnosticField {
    static let sqlState = Int32(UInt8(ascii: "C"))
    static let message = Int32(UInt8(ascii: "M"))
    static let detail = Int32(UInt8(ascii: "D"))
    static let hint = Int32(UInt8(ascii: "H"))
}
