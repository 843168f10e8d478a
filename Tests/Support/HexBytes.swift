extension Array where Element == UInt8 {
    /// The bytes written as `hex`, two hexadecimal digits each (a test's fixture); an odd last
    /// digit or a pair that is not hexadecimal reads as 0.
    public init(hex: String) {
        self.init()
        let digits = Array(hex.utf8)
        reserveCapacity(digits.count / 2)
        for pair in stride(from: 0, to: digits.count, by: 2) {
            let high = Self.value(ofHexDigit: digits[pair]), low = pair + 1 < digits.count ? Self.value(ofHexDigit: digits[pair + 1]) : nil
            append(high.flatMap { high in low.map { high << 4 | $0 } } ?? 0)
        }
    }

    private static func value(ofHexDigit digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
