/// Text as the central store keeps it. PostgreSQL's text cannot hold NUL (and libpq would cut
/// a parameter at one), while a local store keeps any Unicode: a NUL in a name, identifier or
/// sync identifier arrives centrally as U+FFFD, the replacement character, and the rest of the
/// text is kept.
enum CentralText {
    static func storable(_ text: String) -> String {
        guard text.utf8.contains(0) else { return text }
        return String(String.UnicodeScalarView(text.unicodeScalars.map { $0 == "\u{0}" ? "\u{FFFD}" : $0 }))
    }
}
