/// The lines of an INI-style file (the format of /etc/bluetooth/main.conf): `[section]`
/// headers, `key = value` entries, `#` or `;` comments, blank lines. Values keep inner spaces;
/// surrounding whitespace is trimmed. Pure: the caller reads the file.
public struct INIDocument: Sendable {
    /// One `key = value` line.
    public struct Entry: Sendable, Equatable {
        public var section: String
        public var key: String
        public var value: String
        /// 1-based line number in the file.
        public var line: Int
    }

    public private(set) var entries: [Entry] = []

    /// Parses `text`; `file` names it in errors.
    public init(text: String, file: String) throws(ConfigurationError) {
        var section = ""
        for (index, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = index + 1
            let content = rawLine.trimmingWhitespace()
            if content.isEmpty || content.hasPrefix("#") || content.hasPrefix(";") { continue }
            if content.hasPrefix("[") {
                guard content.hasSuffix("]"), content.count > 2 else {
                    throw .invalidLine(file: file, line: line, key: nil, message: "a section header looks like [name]")
                }
                section = String(content.dropFirst().dropLast()).trimmingWhitespace()
                continue
            }
            let (key, value) = content.splitOnce("=")
            let trimmedKey = key.trimmingWhitespace()
            guard let value, !trimmedKey.isEmpty else {
                throw .invalidLine(file: file, line: line, key: nil, message: "expected 'key = value' or [section]")
            }
            entries.append(Entry(section: section, key: trimmedKey, value: value.trimmingWhitespace(), line: line))
        }
    }
}
