/// What can go wrong talking to PostgreSQL. Every case's `description` is one line: libpq's
/// multi-line messages are joined, and nothing adds the connection string (so no password).
public enum PostgresError: Error, CustomStringConvertible, Sendable, Equatable {
    /// The connection could not be made: refused, unreachable, DNS, TLS, authentication, a
    /// database or role that does not exist. libpq's message, on one line.
    case connectionFailed(String)
    /// The server answered with an error: its SQLSTATE (such as 42P01), message, detail and hint.
    case server(sqlState: String, message: String, detail: String?, hint: String?)
    /// The deadline passed before the server answered; the connection is closed.
    case timedOut
    /// The connection broke (or was closed before); it is closed and stays so.
    case connectionLost(String)
    /// A value that is not what its accessor reads: the row, the column and the text as sent.
    case badValue(row: Int, column: Int, text: String)
    /// COPY did not go as it should (the statement was not `COPY … FROM STDIN`, or the data was refused).
    case copyFailed(String)
    /// A text parameter holds a NUL, which PostgreSQL's text cannot hold (libpq would cut the
    /// text there): nothing was sent. `parameter` is its number, 1 for `$1`.
    case nulInText(parameter: Int)

    public var description: String {
        switch self {
        case .connectionFailed(let message):
            "cannot connect to PostgreSQL: \(Self.oneLine(message))"
        case .server(let sqlState, let message, let detail, let hint):
            "PostgreSQL error \(sqlState): \(Self.oneLine(message))"
                + (detail.map { " (detail: \(Self.oneLine($0)))" } ?? "")
                + (hint.map { " (hint: \(Self.oneLine($0)))" } ?? "")
        case .timedOut:
            "PostgreSQL did not answer in time; the connection was closed"
        case .connectionLost(let message):
            "connection to PostgreSQL lost: \(Self.oneLine(message))"
        case .badValue(let row, let column, let text):
            "unexpected value in row \(row), column \(column): \(Self.oneLine(String(text.prefix(200))))"
        case .copyFailed(let message):
            "COPY failed: \(Self.oneLine(message))"
        case .nulInText(let parameter):
            "parameter $\(parameter) holds a NUL character, which PostgreSQL text cannot hold; nothing was sent"
        }
    }

    /// Whether trying again later may succeed: connection failures, lost connections and
    /// timeouts; SQLSTATE classes 08 (connection exception), 53 (insufficient resources, such
    /// as 53100 disk full), 58 (system error, such as 58030 I/O error); 57P01–57P03 (the
    /// server shuts down or cannot take connections yet); 40001 (serialization failure) and
    /// 40P01 (deadlock). Not transient: everything else, such as 28P01 (wrong password), 42501
    /// (insufficient privilege), 3D000 (no such database) or 42P01 (no such table).
    ///
    /// A connection refused for its credentials or its target (a wrong or missing password, a
    /// role or database that does not exist, no pg_hba.conf entry) arrives from libpq as
    /// `connectionFailed` with only a message, and is not transient either: retrying with the
    /// same settings does not help. A caller such as hrmd still retries it, slowly, since an
    /// administrator may fix the server's side meanwhile.
    public var isTransient: Bool {
        switch self {
        case .connectionFailed(let message):
            !Self.refusedForSettings(message)
        case .connectionLost, .timedOut:
            true
        case .server(let sqlState, _, _, _):
            Self.isTransient(sqlState: sqlState)
        case .badValue, .copyFailed, .nulInText:
            false
        }
    }

    /// Whether an SQLSTATE is one of the transient ones (see `isTransient`).
    public static func isTransient(sqlState: String) -> Bool {
        if sqlState.hasPrefix("08") || sqlState.hasPrefix("53") || sqlState.hasPrefix("58") { return true }
        return ["57P01", "57P02", "57P03", "40001", "40P01"].contains(sqlState)
    }

    /// libpq's (and the server's) words for a connection refused for what it asked, not for
    /// how things stand; English, as libpq writes them without a locale set.
    private static func refusedForSettings(_ message: String) -> Bool {
        let markers = [
            "password authentication failed", "no password supplied", "pg_hba.conf",
            "does not exist", "SCRAM authentication", "invalid connection option", "invalid URI",
            "missing \"=\"", "definition of service", "invalid sslmode",
        ]
        return markers.contains { message.contains($0) }
    }

    /// Joins a message's lines with single spaces, dropping empty lines and the lines' own indentation.
    static func oneLine(_ text: String) -> String {
        text.split(whereSeparator: { $0 == "\n" || $0 == "\r" })
            .map { $0.trimmingWhitespace() }
            .filter { !$0.isEmpty }
            .joined(separator: " ")
    }
}

extension Substring {
    fileprivate func trimmingWhitespace() -> Substring {
        var slice = self
        while let first = slice.first, first == " " || first == "\t" { slice = slice.dropFirst() }
        while let last = slice.last, last == " " || last == "\t" { slice = slice.dropLast() }
        return slice
    }
}
