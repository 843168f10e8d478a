import JSONLines
import Foundation

import CommandSupport

/// hrmctl's one way to standard output: what it prints is escaped as ``TerminalText`` says
/// (line breaks and tabs kept), so that a name from a strap or an application cannot reach the
/// terminal as control characters, whatever command prints it. Shadows `Swift.print` in hrmctl.
func print(_ items: Any..., separator: String = " ", terminator: String = "\n") {
    let text = items.map { "\($0)" }.joined(separator: separator)
    Swift.print(TerminalText.escaped(text, keepingLineBreaks: true), terminator: terminator)
}

/// Prints one value as one line of JSON (JSON Lines).
func printJSONLine(_ value: JSONValue) {
    print(value.serialized)
}

/// One CSV record (RFC 4180 quoting), control characters other than line breaks escaped (CSV
/// goes to terminals as often as to files).
func csvRow(_ fields: [String]) -> String {
    fields.map { TerminalText.escaped($0, keepingLineBreaks: true) }.map { field in
        guard field.contains(where: { $0 == "," || $0 == "\"" || $0.isNewline }) else { return field }
        return "\"" + field.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }.joined(separator: ",")
}

/// A plain text table with left-aligned columns.
func printTable(header: [String], rows: [[String]]) {
    // Cells are escaped in whole, line breaks too: a cell is one line of the table.
    let rows = rows.map { $0.map { TerminalText.escaped($0) } }
    var widths = header.map(\.count)
    for row in rows {
        for (index, cell) in row.enumerated() where index < widths.count { widths[index] = max(widths[index], cell.count) }
    }
    func line(_ cells: [String]) -> String {
        cells.enumerated().map { index, cell in
            index == cells.count - 1 ? cell : cell.padding(toLength: widths[index], withPad: " ", startingAt: 0)
        }.joined(separator: "  ")
    }
    print(line(header))
    for row in rows { print(line(row)) }
}

/// A number as people and JSON want it: integers without a fraction, others with at most
/// ten significant digits (so 72 count/min in count/s prints 1.2, not 1.2000000000000002).
struct DisplayNumber: CustomStringConvertible {
    var value: Double

    var rounded: Double {
        guard value.isFinite, value != 0 else { return value }
        let magnitude = Foundation.floor(Foundation.log10(Swift.abs(value)))
        let scale = Foundation.pow(10, 9 - magnitude)
        return (value * scale).rounded() / scale
    }

    var description: String {
        let number = rounded
        if number == number.rounded(), Swift.abs(number) < 1e15 { return String(Int64(number)) }
        return "\(number)"
    }

    var json: JSONValue { .number(rounded) }
}
