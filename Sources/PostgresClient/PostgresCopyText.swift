/// The text format of `COPY … FROM STDIN`: fields separated by tabs, rows by newlines, NULL as
/// `\N`, and backslash, tab, newline and carriage return escaped with a backslash.
public enum PostgresCopyText {
    /// One field in COPY's text format; nil is NULL (`\N`).
    public static func escape(_ field: String?) -> String {
        guard let field else { return "\\N" }
        guard field.utf8.contains(where: { $0 == 0x5C || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }) else { return field }
        var escaped = ""
        escaped.reserveCapacity(field.utf8.count + 8)
        for character in field.unicodeScalars {
            switch character {
            case "\\": escaped += "\\\\"
            case "\t": escaped += "\\t"
            case "\n": escaped += "\\n"
            case "\r": escaped += "\\r"
            default: escaped.unicodeScalars.append(character)
            }
        }
        return escaped
    }

    /// One row: its fields escaped and joined with tabs, without the newline (`copyIn` adds it).
    public static func row(_ fields: [String?]) -> String {
        fields.map(escape).joined(separator: "\t")
    }
}
