import ArgumentParser
@preconcurrency import Glibc
import StackFloorDatabase

/// The floor under `hrmctl`'s one-hour command: the sqlite3 shell's own job (one query on a
/// plain table, its rows printed as a JSON array as `sqlite3 -json` prints them), done by a
/// program on hrmctl's stack (the Swift runtime linked statically, Foundation through GRDB,
/// GRDB, ArgumentParser) and nothing else. `hrmbench read` times it against the shell in the
/// same run: what it costs above the shell is what this stack costs any command, before any of
/// hrmctl's own work. The loop is kept lean (bytes into one buffer, each column's key made
/// once, whole numbers written digit by digit), so that the floor is the stack's and not its own.
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
            let statement = try db.makeStatement(sql: sql)
            // `"name":` of each column, the first after `{`, the others after `,`.
            let keys = statement.columnNames.enumerated().map { index, name in Array((index == 0 ? "{" : ",").utf8) + Array("\"\(name)\":".utf8) }
            let rows = try Row.fetchCursor(statement)
            var first = true
            while let row = try rows.next() {
                output.append(contentsOf: first ? "[".utf8 : ",\n".utf8)
                first = false
                for index in keys.indices {
                    output.append(contentsOf: keys[index])
                    switch (row[index] as DatabaseValue).storage {
                    case .int64(let integer): Self.append(integer, to: &output)
                    case .double(let double): output.append(contentsOf: double.description.utf8)
                    case .string(let string): output.append(contentsOf: "\"\(string)\"".utf8)
                    case .null, .blob: output.append(contentsOf: "null".utf8)
                    }
                }
                output.append(UInt8(ascii: "}"))
                if output.count >= 1 << 16 { Self.write(&output) }
            }
            if !first { output.append(contentsOf: "]\n".utf8) }
        }
        Self.write(&output)
    }

    /// Appends the decimal digits of `integer`.
    private static func append(_ integer: Int64, to output: inout [UInt8]) {
        if integer < 0 { output.append(UInt8(ascii: "-")) }
        var digits = 1
        var rest = integer.magnitude / 10
        while rest > 0 {
            digits += 1
            rest /= 10
        }
        let start = output.count
        output.append(contentsOf: repeatElement(UInt8(ascii: "0"), count: digits))
        var magnitude = integer.magnitude
        for position in (start..<start + digits).reversed() {
            output[position] = UInt8(ascii: "0") + UInt8(magnitude % 10)
            magnitude /= 10
        }
    }

    /// Writes `output` to standard output and empties it.
    private static func write(_ output: inout [UInt8]) {
        output.withUnsafeBytes { _ = fwrite($0.baseAddress, 1, $0.count, stdout) }
        output.removeAll(keepingCapacity: true)
    }
}
