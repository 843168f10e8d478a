/// Bytes written as hexadecimal text, as in traces and on the `hrmctl decode` command line.
public enum HexBytes {
    /// Parses hex text into bytes.
    ///
    /// Accepted: two hex digits per byte in either case (`164a01`, `164A01`), an optional
    /// leading `0x` or `0X` (`0x164a01`), and spaces, tabs, newlines, `:` or `-` between bytes
    /// (`16 4a 01`, `16:4a:01`); leading and trailing whitespace is ignored. Empty text (or a
    /// bare `0x`) is zero bytes.
    ///
    /// - Throws: ``GATTDecodingError/malformedHex(_:)`` saying why: a character that is not a hex
    ///   digit or separator (with its 1-based position), a separator inside a byte, or an odd
    ///   number of digits.
    public static func parse(_ text: String) throws(GATTDecodingError) -> [UInt8] {
        if let bytes = parsePlainDigits(text.utf8) { return bytes }
        var characters = Substring(text)
        var position = 1  // of the next character, 1-based, for messages
        while let first = characters.first, first.isWhitespace {
            characters = characters.dropFirst()
            position += 1
        }
        if characters.hasPrefix("0x") || characters.hasPrefix("0X") {
            characters = characters.dropFirst(2)
            position += 2
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(characters.utf8.count / 2)
        var digitCount = 0
        var high: UInt8?  // the first digit of a byte under way
        for character in characters {
            defer { position += 1 }
            if let value = hexValue(character) {
                digitCount += 1
                if let first = high {
                    bytes.append(first << 4 | value)
                    high = nil
                } else {
                    high = value
                }
            } else if isSeparator(character) {
                guard high == nil else {
                    throw .malformedHex(
                        "separator \(String(reflecting: character)) at position \(position) splits a byte")
                }
            } else {
                throw .malformedHex("\(String(reflecting: character)) at position \(position) is not a hex digit")
            }
        }
        guard high == nil else { throw .malformedHex("odd number of hex digits (\(digitCount))") }
        return bytes
    }

    /// The common case, fast: an even number of hex digits and nothing else (what traces
    /// hold). nil sends anything else through the full parser, which explains errors.
    /// Parses hex given as UTF-8 bytes, as `parse(_:)` does.
    public static func parse(utf8: UnsafeBufferPointer<UInt8>) throws(GATTDecodingError) -> [UInt8] {
        if let bytes = parsePlainDigits(utf8) { return bytes }
        return try parse(String(decoding: utf8, as: UTF8.self))
    }

    private static func parsePlainDigits(_ utf8: some Collection<UInt8>) -> [UInt8]? {
        guard utf8.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(utf8.count / 2)
        var high: UInt8?
        for unit in utf8 {
            guard let value = hexDigitValue(unit) else { return nil }
            if let first = high {
                bytes.append(first << 4 | value)
                high = nil
            } else {
                high = value
            }
        }
        return bytes
    }

    /// The bytes as lowercase hex, two digits per byte, no separators: `[0x16, 0x4A]` → `"164a"`.
    public static func string(_ bytes: some Sequence<UInt8>) -> String {
        var utf8: [UInt8] = []
        utf8.reserveCapacity(2 * bytes.underestimatedCount)
        for byte in bytes {
            utf8.append(digits[Int(byte >> 4)])
            utf8.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: utf8, as: UTF8.self)
    }

    private static let digits: [UInt8] = Array("0123456789abcdef".utf8)

    private static func hexValue(_ character: Character) -> UInt8? {
        guard let ascii = character.asciiValue else { return nil }
        switch ascii {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return ascii - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return ascii - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return ascii - UInt8(ascii: "A") + 10
        default: return nil
        }
    }

    private static func isSeparator(_ character: Character) -> Bool {
        switch character {
        case " ", "\t", "\n", "\r", "\r\n", ":", "-": return true
        default: return false
        }
    }
}

/// The value of one ASCII hex digit, either case.
@inline(__always)
func hexDigitValue(_ unit: UInt8) -> UInt8? {
    switch unit {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): unit - UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): unit - UInt8(ascii: "a") + 10
    case UInt8(ascii: "A")...UInt8(ascii: "F"): unit - UInt8(ascii: "A") + 10
    default: nil
    }
}
