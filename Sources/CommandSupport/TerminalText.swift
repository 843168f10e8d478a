/// Text from outside (a strap's advertised name, a device identifier, a source, a file name)
/// made safe to print on a terminal or in a log line: control characters are written as
/// escapes, as `ls` and `systemctl` do, so that a name cannot move the cursor, retitle or clear
/// the terminal, or begin a line of its own that looks like hrmd's.
public enum TerminalText {
    /// `text` with every control character escaped: C0 (`\n` as `\n`, others as `\xNN`), DEL,
    /// C1, the line and paragraph separators and the bidirectional overrides (as `\u{NNNN}`).
    /// A backslash is left alone, so text without controls prints as it is.
    public static func escaped(_ text: String, keepingLineBreaks: Bool = false) -> String {
        guard text.unicodeScalars.contains(where: { needsEscape($0, keepingLineBreaks) }) else { return text }
        var result = ""
        result.reserveCapacity(text.utf8.count + 8)
        for scalar in text.unicodeScalars {
            guard needsEscape(scalar, keepingLineBreaks) else {
                result.unicodeScalars.append(scalar)
                continue
            }
            switch scalar {
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            default:
                let hex = String(scalar.value, radix: 16)
                result += scalar.value < 0x100
                    ? "\\x" + String(repeating: "0", count: 2 - hex.count) + hex : "\\u{" + hex + "}"
            }
        }
        return result
    }

    private static func needsEscape(_ scalar: Unicode.Scalar, _ keepingLineBreaks: Bool) -> Bool {
        switch scalar.value {
        case 0x0A, 0x09: !keepingLineBreaks
        case 0x00..<0x20, 0x7F...0x9F, 0x2028, 0x2029, 0x202A...0x202E, 0x2066...0x2069: true
        default: false
        }
    }
}
