import Foundation
import PostgresClient
import TestSupport
import Testing

@Suite("PostgreSQL client against a server of its own", .serialized)
struct PostgresClientTests {
    @Test("connects over the socket and over TCP with a password")
    func connects() async throws {
        let postgres = try await TemporaryPostgres.shared()
        let local = try postgres.connect()
        #expect(local.user == "postgres")
        #expect(local.database == "postgres")
        #expect(local.serverVersion >= 100_000)
        #expect(local.backendPID > 0)
        let tcp = try postgres.connect(over: .tcp)
        #expect(try tcp.execute("SELECT current_setting('application_name')").string(0, 0) == "hrmd")
        let uri = "postgresql://postgres:\(postgres.password)@127.0.0.1:\(postgres.port)/postgres?application_name=probe"
        let byURI = try PostgresConnection(conninfo: uri, timeout: .seconds(10))
        #expect(try byURI.execute("SELECT current_setting('application_name'), inet_client_addr()::text").string(0, 0) == "probe")
    }

    @Test("a wrong password is connectionFailed, one line, without the password, not transient")
    func wrongPassword() async throws {
        let postgres = try await TemporaryPostgres.shared()
        do {
            _ = try PostgresConnection(conninfo: postgres.conninfo(over: .tcp, password: "not-the-secret"), timeout: .seconds(10))
            Issue.record("connected with a wrong password")
        } catch {
            guard case .connectionFailed(let message) = error else { Issue.record("\(error)"); return }
            #expect(message.contains("password authentication failed"))
            #expect(!error.description.contains("\n"))
            #expect(!error.description.contains("not-the-secret"))
            #expect(!error.isTransient)
        }
    }

    @Test("parameters, NULLs and scalar accessors")
    func parameters() async throws {
        let connection = try await TemporaryPostgres.shared().connect()
        let result = try connection.execute(
            "SELECT $1::text, $2::text IS NULL, $3::bigint, $4::float8, $5::bool, NULL::int, 'x' AS named",
            ["tab\there 'quoted' ünïcode", nil, "-9223372036854775808", "0.1", "t"])
        #expect(result.rowCount == 1)
        #expect(result.columnCount == 7)
        #expect(result.string(0, 0) == "tab\there 'quoted' ünïcode")
        #expect(try result.bool(0, 1))
        #expect(try result.int64(0, 2) == Int64.min)
        #expect(try result.double(0, 3) == 0.1)
        #expect(try result.bool(0, 4))
        #expect(result.isNull(0, 5))
        #expect(result.string(0, 5) == nil)
        #expect(result.columnName(6) == "named")
        #expect(result.column(named: "named") == 6)
        #expect(throws: PostgresError.badValue(row: 0, column: 5, text: "NULL")) { try result.int64(0, 5) }
        #expect(throws: PostgresError.badValue(row: 0, column: 6, text: "x")) { try result.int64(0, 6) }
        try connection.execute("CREATE TEMP TABLE t (a int)")
        #expect(try connection.execute("INSERT INTO t SELECT generate_series(1, 5)").affectedRows == 5)
    }

    @Test("a parameter holding a NUL is refused before sending, not cut short; the connection stays usable")
    func nulParameter() async throws {
        let connection = try await TemporaryPostgres.shared().connect()
        #expect(throws: PostgresError.nulInText(parameter: 2)) {
            try connection.execute("SELECT $1::text, $2::text", ["fine", "C0:FF:EE\u{0}forged"])
        }
        #expect(!PostgresError.nulInText(parameter: 2).isTransient)
        #expect(try connection.execute("SELECT $1::text", ["still here"]).string(0, 0) == "still here")
    }

    @Test("arrays round-trip: int64 extremes, doubles, NULL elements, 10,000 elements")
    func arrays() async throws {
        let connection = try await TemporaryPostgres.shared().connect()
        let integers: [Int64?] = [Int64.min, -1, 0, nil, 1, Int64.max]
        let back = try connection.execute("SELECT $1::bigint[]", [PostgresArrayLiteral.int64(integers)])
        #expect(try back.int64Array(0, 0) == integers)
        let doubles: [Double?] = [0.1, 1e-300, -1e300, .leastNonzeroMagnitude, .greatestFiniteMagnitude, -0.0, .infinity, -.infinity, nil, 1.0 / 3.0]
        let doublesBack = try connection.execute("SELECT $1::float8[]", [PostgresArrayLiteral.double(doubles)]).doubleArray(0, 0)
        #expect(doublesBack.count == doubles.count)
        for (sent, received) in zip(doubles, doublesBack) {
            #expect(sent?.bitPattern == received?.bitPattern)
        }
        let nan = try connection.execute("SELECT $1::float8[]", [PostgresArrayLiteral.double([Double.nan, 2])]).doubleElements(0, 0)
        #expect(nan[0].isNaN && nan[1] == 2)
        let many = (0..<10_000).map { Int64($0) * 1_000_003 - 5_000_000_000 }
        #expect(try connection.execute("SELECT $1::bigint[]", [PostgresArrayLiteral.int64(many)]).int64Elements(0, 0) == many)
        let manyDoubles = (0..<10_000).map { Double($0) * 0.37 - 1234.5 }
        #expect(try connection.execute("SELECT $1::float8[]", [PostgresArrayLiteral.double(manyDoubles)]).doubleElements(0, 0) == manyDoubles)
        // Texts read back as themselves whatever they hold: quotes, backslashes, braces, commas, NULL.
        let texts = ["plain", "a \"quoted\" \\ back", "{braces},comma", "NULL", "", " spaced ", "ünï"]
        let textsBack = try connection.execute(
            "SELECT array_to_json($1::text[])::text, cardinality($1::text[])", [PostgresArrayLiteral.text(texts)])
        #expect(try JSONSerialization.jsonObject(with: Data((textsBack.string(0, 0) ?? "").utf8)) as? [String] == texts)
        #expect(textsBack.string(0, 1) == String(texts.count))
        let int32s = try connection.execute("SELECT ARRAY[1, NULL, -2147483648]::int[], '{}'::int[], '[0:1]={5,6}'::int[]")
        #expect(try int32s.int32Array(0, 0) == [1, nil, Int32.min])
        #expect(try int32s.int32Elements(0, 1) == [])
        #expect(try int32s.int32Elements(0, 2) == [5, 6])
        #expect(throws: PostgresError.self) { try int32s.int32Elements(0, 0) }
    }

    @Test("COPY FROM STDIN with awkward text and NULLs")
    func copy() async throws {
        let connection = try await TemporaryPostgres.shared().connect()
        try connection.execute("CREATE TEMP TABLE copied (id bigint, body text)")
        let bodies: [String?] = ["plain", "tab\there", "line\nbreak", "back\\slash \\N", "cr\r\nlf", "ünïcödé ❤️", nil, "", "\\"]
        var rows = bodies.enumerated().map { PostgresCopyText.row([String($0.offset), $0.element]) }
        rows += (0..<20_000).map { PostgresCopyText.row([String(1000 + $0), "row \($0)"]) }
        #expect(try connection.copyIn("COPY copied (id, body) FROM STDIN", rows: rows) == rows.count)
        let back = try connection.execute("SELECT body FROM copied WHERE id < 1000 ORDER BY id")
        #expect((0..<back.rowCount).map { back.string($0, 0) } == bodies)
        #expect(try connection.execute("SELECT count(*) FROM copied").int(0, 0) == rows.count)
        // A refused row fails the COPY; the connection goes on.
        #expect(throws: PostgresError.self) { try connection.copyIn("COPY copied (id, body) FROM STDIN", rows: ["1\tok", "not-a-number\tx"]) }
        #expect(try connection.execute("SELECT count(*) FROM copied").int(0, 0) == rows.count)
        #expect(throws: PostgresError.copyFailed("the statement is not COPY … FROM STDIN")) { try connection.copyIn("SELECT 1", rows: []) }
    }

    @Test("a server error carries its SQLSTATE and is not transient")
    func serverError() async throws {
        let connection = try await TemporaryPostgres.shared().connect()
        do {
            try connection.execute("SELECT * FROM no_such_table")
            Issue.record("no error")
        } catch {
            guard case .server(let sqlState, let message, _, _) = error else { Issue.record("\(error)"); return }
            #expect(sqlState == "42P01")
            #expect(message.contains("no_such_table"))
            #expect(!error.isTransient)
        }
        #expect(try connection.execute("SELECT 1").int(0, 0) == 1)
        #expect(PostgresError.server(sqlState: "53100", message: "", detail: nil, hint: nil).isTransient)
        #expect(PostgresError.server(sqlState: "40P01", message: "", detail: nil, hint: nil).isTransient)
        #expect(!PostgresError.server(sqlState: "28P01", message: "", detail: nil, hint: nil).isTransient)
        #expect(PostgresError.server(sqlState: "x", message: "a\n  b", detail: "c\nd", hint: nil).description == "PostgreSQL error x: a b (detail: c d)")
    }

    @Test("a transaction rolls back when its body throws")
    func transaction() async throws {
        let connection = try await TemporaryPostgres.shared().connect()
        try connection.executeScript("CREATE TEMP TABLE items (n int PRIMARY KEY); INSERT INTO items VALUES (1)")
        #expect(throws: PostgresError.self) {
            try connection.transaction { () throws(PostgresError) in
                try connection.execute("INSERT INTO items VALUES (2)")
                try connection.execute("INSERT INTO items VALUES (1)")
            }
        }
        #expect(try connection.execute("SELECT count(*) FROM items").int(0, 0) == 1)
        let value = try connection.transaction { () throws(PostgresError) in
            try connection.execute("INSERT INTO items VALUES (3) RETURNING n").int(0, 0)
        }
        #expect(value == 3)
        #expect(try connection.execute("SELECT count(*) FROM items").int(0, 0) == 2)
    }

    @Test("LISTEN/NOTIFY: a notification arrives; the wait ends at its deadline when none does")
    func notifications() async throws {
        let postgres = try await TemporaryPostgres.shared()
        let listener = try postgres.connect()
        try listener.listen("hrmd events")
        let start = ContinuousClock.now
        #expect(try listener.notifications(waitingUpTo: .milliseconds(300)).isEmpty)
        let waited = ContinuousClock.now - start
        #expect(waited >= .milliseconds(250) && waited < .seconds(3))
        let sender = try postgres.connect()
        try sender.notify("hrmd events", payload: "hello\tworld")
        let received = try listener.notifications(waitingUpTo: .seconds(10))
        #expect(received == [PostgresNotification(channel: "hrmd events", payload: "hello\tworld", backendPID: sender.backendPID)])
    }

    @Test("a listener that never answers: the connect ends with timedOut at its deadline")
    func silentConnect() throws {
        let silent = try SilentListener()
        let start = ContinuousClock.now
        #expect(throws: PostgresError.timedOut) {
            _ = try PostgresConnection(conninfo: "host=127.0.0.1 port=\(silent.port) user=x dbname=x sslmode=disable", timeout: .seconds(1))
        }
        #expect(ContinuousClock.now - start < .seconds(3))
    }

    @Test("a query over a peer that stops answering ends with timedOut within the deadline")
    func blackholedQuery() async throws {
        let postgres = try await TemporaryPostgres.shared()
        let proxy = try BlackholingProxy(upstreamPort: postgres.port)
        let connection = try PostgresConnection(
            conninfo: "host=127.0.0.1 port=\(proxy.port) user=postgres dbname=postgres password=\(postgres.password) sslmode=disable",
            timeout: .seconds(10))
        #expect(try connection.execute("SELECT 1").int(0, 0) == 1)
        proxy.blackhole()
        let start = ContinuousClock.now
        #expect(throws: PostgresError.timedOut) { try connection.execute("SELECT 2", timeout: .seconds(1)) }
        let elapsed = ContinuousClock.now - start
        #expect(elapsed < .seconds(3), "took \(elapsed)")
        #expect(!connection.isOpen)
        #expect(throws: PostgresError.self) { try connection.execute("SELECT 3") }
    }

    @Test("pg_terminate_backend: connectionLost, transient, and every later call throws")
    func terminated() async throws {
        let postgres = try await TemporaryPostgres.shared()
        let connection = try postgres.connect()
        let killer = try postgres.connect()
        #expect(try killer.execute("SELECT pg_terminate_backend($1)", [String(connection.backendPID)]).bool(0, 0))
        try await eventually("the backend ended") {
            try killer.execute("SELECT count(*) FROM pg_stat_activity WHERE pid = $1", [String(connection.backendPID)]).int(0, 0) == 0
        }
        do {
            try connection.execute("SELECT 1")
            Issue.record("the statement ran")
        } catch {
            guard case .connectionLost = error else { Issue.record("\(error)"); return }
            #expect(error.isTransient)
            #expect(!error.description.contains("\n"))
        }
        #expect(!connection.isOpen)
        #expect(throws: PostgresError.self) { try connection.execute("SELECT 1") }
    }

    @Test("a statement after close throws connectionLost; close is idempotent")
    func afterClose() async throws {
        let connection = try await TemporaryPostgres.shared().connect()
        connection.close()
        connection.close()
        #expect(throws: PostgresError.connectionLost("the connection was closed")) { try connection.execute("SELECT 1") }
        #expect(throws: PostgresError.self) { try connection.notifications(waitingUpTo: .milliseconds(10)) }
    }

    @Test("COPY text escaping and array literals")
    func formats() {
        #expect(PostgresCopyText.escape(nil) == "\\N")
        #expect(PostgresCopyText.escape("a\\b\tc\nd\re") == "a\\\\b\\tc\\nd\\re")
        #expect(PostgresCopyText.escape("plain") == "plain")
        #expect(PostgresArrayLiteral.double([0.1, .nan, .infinity, -.infinity, nil]) == "{0.1,NaN,Infinity,-Infinity,NULL}")
        #expect(PostgresArrayLiteral.int64([Int64]()) == "{}")
        #expect(PostgresError.connectionFailed("FATAL:  password authentication failed for user \"x\"\n").isTransient == false)
        #expect(PostgresError.connectionFailed("connection to server at \"h\" failed: Connection refused\n\tIs the server running?").isTransient)
    }
}
