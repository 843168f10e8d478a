import CommandSupport
import Testing

@Suite("Names escaped before they reach a terminal or a log line")
struct TerminalTextTests {
    @Test("control characters are escapes; everything else, backslashes and non-ASCII names included, is kept")
    func escapes() {
        #expect(TerminalText.escaped("Polar H10 7A1B2C3D") == "Polar H10 7A1B2C3D")
        #expect(TerminalText.escaped("Strap \\ 心拍 ♥") == "Strap \\ 心拍 ♥")
        #expect(TerminalText.escaped("\u{1B}]0;owned\u{07}\u{1B}[2J") == "\\x1b]0;owned\\x07\\x1b[2J")
        #expect(TerminalText.escaped("dev\n2026-11-28 hrmd: forged") == "dev\\n2026-11-28 hrmd: forged")
        #expect(TerminalText.escaped("a\rb\tc\u{7F}\u{9B}\u{202E}d\u{2028}") == "a\\rb\\tc\\x7f\\x9b\\u{202e}d\\u{2028}")
        #expect(TerminalText.escaped("nul\u{0}") == "nul\\x00")
    }

    @Test("kept line breaks stay, other controls do not")
    func lineBreaks() {
        #expect(TerminalText.escaped("a\nb\tc\u{1B}[K", keepingLineBreaks: true) == "a\nb\tc\\x1b[K")
    }
}
