/// Swift arrays as PostgreSQL's text array literals (`{1,2,NULL}`), for parameters such as
/// `$1::bigint[]`. Doubles round-trip exactly: Swift's shortest description, and NaN,
/// Infinity and -Infinity spelt as PostgreSQL spells them.
public enum PostgresArrayLiteral {
    public static func int64(_ values: some Sequence<Int64>) -> String { literal(values) { String($0) } }
    public static func int64(_ values: some Sequence<Int64?>) -> String { literal(values) { $0.map { String($0) } } }
    public static func int32(_ values: some Sequence<Int32>) -> String { literal(values) { String($0) } }
    public static func int32(_ values: some Sequence<Int32?>) -> String { literal(values) { $0.map { String($0) } } }
    public static func int(_ values: some Sequence<Int>) -> String { literal(values) { String($0) } }
    public static func int(_ values: some Sequence<Int?>) -> String { literal(values) { $0.map { String($0) } } }
    public static func double(_ values: some Sequence<Double>) -> String { literal(values) { text($0) } }
    public static func double(_ values: some Sequence<Double?>) -> String { literal(values) { $0.map(text) } }

    /// Texts, each quoted (backslash and double quote escaped), so that any text reads back
    /// as itself.
    public static func text(_ values: some Sequence<String>) -> String {
        literal(values) { value in
            var quoted = "\""
            for character in value {
                if character == "\\" || character == "\"" { quoted.append("\\") }
                quoted.append(character)
            }
            return quoted + "\""
        }
    }

    /// A double as PostgreSQL's float8 input reads it back to the same bits.
    public static func text(_ value: Double) -> String {
        if value.isNaN { return "NaN" }
        if value.isInfinite { return value < 0 ? "-Infinity" : "Infinity" }
        return value.description
    }

    private static func literal<S: Sequence>(_ values: S, _ element: (S.Element) -> String?) -> String {
        var text = "{"
        var first = true
        for value in values {
            if !first { text += "," }
            first = false
            text += element(value) ?? "NULL"
        }
        return text + "}"
    }
}
