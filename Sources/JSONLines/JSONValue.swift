/// A JSON value whose objects keep their keys in the order written, so JSON Lines output
/// reads in the documented order (type, start, end, value, …).
public indirect enum JSONValue: Sendable, Equatable {
    case string(String)
    case number(Double)
    /// A whole number written exactly, however large (a nanosecond timestamp needs more digits
    /// than a double holds).
    case integer(Int64)
    case bool(Bool)
    case null
    case array([JSONValue])
    case object([(String, JSONValue)])

    /// The value or null.
    public static func optional(_ text: String?) -> JSONValue { text.map(JSONValue.string) ?? .null }

    /// Compact JSON text.
    public var serialized: String {
        var output = ""
        write(to: &output)
        return output
    }

    private func write(to output: inout String) {
        switch self {
        case .string(let text): Self.writeString(text, to: &output)
        case .number(let number): output += Self.format(number)
        case .integer(let number): output += String(number)
        case .bool(let flag): output += flag ? "true" : "false"
        case .null: output += "null"
        case .array(let items):
            output += "["
            for (index, item) in items.enumerated() {
                if index > 0 { output += "," }
                item.write(to: &output)
            }
            output += "]"
        case .object(let members):
            output += "{"
            for (index, (key, value)) in members.enumerated() {
                if index > 0 { output += "," }
                Self.writeString(key, to: &output)
                output += ":"
                value.write(to: &output)
            }
            output += "}"
        }
    }

    /// Integers without a fraction; others in Swift's shortest round-trip form; non-finite
    /// numbers (never valid JSON) as null.
    private static func format(_ number: Double) -> String {
        guard number.isFinite else { return "null" }
        if number == number.rounded(), abs(number) < 1e15 { return String(Int64(number)) }
        return "\(number)"
    }

    private static func writeString(_ text: String, to output: inout String) {
        output += "\""
        if !text.utf8.contains(where: { $0 < 0x20 || $0 == 0x22 || $0 == 0x5C }) {
            output += text
            output += "\""
            return
        }
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": output += "\\\""
            case "\\": output += "\\\\"
            case "\n": output += "\\n"
            case "\r": output += "\\r"
            case "\t": output += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                output += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: output.unicodeScalars.append(scalar)
            }
        }
        output += "\""
    }

    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool { lhs.serialized == rhs.serialized }
}
