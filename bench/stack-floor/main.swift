import ArgumentParser
import GRDB

/// The floor under `hrmctl`'s one-hour command: the sqlite3 shell's own job (one query on a
/// plain table, its rows printed as a JSON array as `sqlite3 -json` prints them), done by a
/// program on hrmctl's stack (the Swift runtime linked statically, Foundation through GRDB,
/// GRDB, ArgumentParser) and nothing else. `hrmbench read` times it against the shell in the
/// same run: what it costs above the shell is what this stack costs any command, before any of
/// hrmctl's own work.
@main
struct StackFloor: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stack-floor", abstract: "Print one query's rows as a JSON array, read through GRDB.")

    @Argument(help: "The SQLite file, opened read-only.")
    var file: String

    @Argument(help: "The query.")
    var sql: String

    func run() throws {
        var configuration = Configuration()
        configuration.readonly = true
        let database = try DatabaseQueue(path: file, configuration: configuration)
        var output: [UInt8] = []
        output.reserveCapacity(1 << 16)
        try database.read { db in
            let rows = try Row.fetchCursor(db, sql: sql)
            var first = true
            while let row = try rows.next() {
                output.append(contentsOf: first ? Array("[{".utf8) : Array(",\n{".utf8))
                first = false
                for (index, (column, value)) in row.enumerated() {
                    if index > 0 { output.append(UInt8(ascii: ",")) }
                    output.append(contentsOf: "\"\(column)\":".utf8)
                    switch value.storage {
                    case .null: output.append(contentsOf: "null".utf8)
                    case .int64(let integer): output.append(contentsOf: String(integer).utf8)
                    case .double(let double): output.append(contentsOf: String(double).utf8)
                    case .string(let string): output.append(contentsOf: "\"\(string)\"".utf8)
                    case .blob: output.append(contentsOf: "\"\"".utf8)
                    }
                }
                output.append(UInt8(ascii: "}"))
                if output.count >= 1 << 16 {
                    print(String(decoding: output, as: UTF8.self), terminator: "")
                    output.removeAll(keepingCapacity: true)
                }
            }
            if !first { output.append(contentsOf: "]\n".utf8) }
        }
        print(String(decoding: output, as: UTF8.self), terminator: "")
    }
}
