/// RFC 3339 date-times, exact to the microsecond, without Foundation.
///
/// Formats in UTC (`2026-11-20T10:00:00.123Z`); parses any RFC 3339 date-time with `Z` or a
/// numeric offset and up to nanosecond fractions (digits past microseconds are truncated).
public enum RFC3339 {
    /// Formats `time` in UTC with `fractionDigits` (0…6) digits after the seconds.
    public static func string(from time: Timestamp, fractionDigits: Int = 3) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(27)
        append(time, fractionDigits: fractionDigits, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends `time` as `string(from:fractionDigits:)` formats it, as UTF-8: the way to
    /// print many times without a string each.
    public static func append(_ time: Timestamp, fractionDigits: Int = 3, to bytes: inout [UInt8]) {
        let micros = time.microsecondsSinceEpoch
        let seconds = floorDiv(micros, 1_000_000)
        let fraction = micros &- seconds &* 1_000_000  // in 0..<1_000_000, exact even at Int64.min
        let days = floorDiv(seconds, 86_400)
        let secondOfDay = seconds - days * 86_400
        let (year, month, day) = civilDate(fromDaysSinceEpoch: days)
        appendPadded(year, 4, to: &bytes)
        bytes.append(UInt8(ascii: "-"))
        appendPadded(month, 2, to: &bytes)
        bytes.append(UInt8(ascii: "-"))
        appendPadded(day, 2, to: &bytes)
        bytes.append(UInt8(ascii: "T"))
        appendPadded(secondOfDay / 3600, 2, to: &bytes)
        bytes.append(UInt8(ascii: ":"))
        appendPadded(secondOfDay / 60 % 60, 2, to: &bytes)
        bytes.append(UInt8(ascii: ":"))
        appendPadded(secondOfDay % 60, 2, to: &bytes)
        let digits = min(max(fractionDigits, 0), 6)
        if digits > 0 {
            var divisor: Int64 = 1
            for _ in 0..<(6 - digits) { divisor *= 10 }
            bytes.append(UInt8(ascii: "."))
            appendPadded(fraction / divisor, digits, to: &bytes)
        }
        bytes.append(UInt8(ascii: "Z"))
    }

    /// Parses an RFC 3339 date-time such as `2026-11-20T10:00:00Z` or
    /// `2026-11-20T11:00:00.5+01:00`; nil when the text is not one.
    public static func parse(_ text: String) -> Timestamp? {
        var text = text
        return text.withUTF8 { parse(utf8: $0) }
    }

    /// Parses a date-time given as UTF-8 bytes.
    public static func parse(utf8: UnsafeBufferPointer<UInt8>) -> Timestamp? {
        var scanner = DigitScanner(utf8)
        guard let year = scanner.number(digits: 4), scanner.expect("-"),
              let month = scanner.number(digits: 2), scanner.expect("-"),
              let day = scanner.number(digits: 2), scanner.expect(anyOf: "Tt "),
              let hour = scanner.number(digits: 2), scanner.expect(":"),
              let minute = scanner.number(digits: 2), scanner.expect(":"),
              let second = scanner.number(digits: 2)
        else { return nil }
        guard (1...12).contains(month), (1...daysIn(month: month, year: year)).contains(day),
              hour < 24, minute < 60, second < 61
        else { return nil }
        var micros: Int64 = 0
        if scanner.expect(".") {
            var count = 0
            while let digit = scanner.digit() {
                if count < 6 { micros = micros * 10 + digit }
                count += 1
            }
            guard count > 0 else { return nil }
            for _ in 0..<max(0, 6 - count) { micros *= 10 }
        }
        var offsetSeconds: Int64 = 0
        if scanner.expect(anyOf: "Zz") {
        } else if let sign = scanner.sign() {
            guard let offsetHour = scanner.number(digits: 2), scanner.expect(":"),
                  let offsetMinute = scanner.number(digits: 2), offsetHour < 24, offsetMinute < 60
            else { return nil }
            offsetSeconds = sign * (offsetHour * 3600 + offsetMinute * 60)
        } else {
            return nil
        }
        guard scanner.atEnd else { return nil }
        let days = daysSinceEpoch(year: year, month: month, day: day)
        let seconds = days * 86_400 + hour * 3600 + minute * 60 + min(second, 59) - offsetSeconds
        return Timestamp(microsecondsSinceEpoch: seconds * 1_000_000 + micros)
    }

    // MARK: Civil calendar (proleptic Gregorian), after H. Hinnant's days_from_civil.

    /// Days since 1970-01-01 of a calendar date.
    public static func daysSinceEpoch(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = floorDiv(y, 400)
        let yearOfEra = y - era * 400
        let monthIndex = month > 2 ? month - 3 : month + 9
        let dayOfYear = (153 * monthIndex + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The calendar date of a day count since 1970-01-01.
    public static func civilDate(fromDaysSinceEpoch days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let z = days + 719_468
        let era = floorDiv(z, 146_097)
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    private static func daysIn(month: Int64, year: Int64) -> Int64 {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// `a / b` rounded down (towards minus infinity), for a positive `b`.
    static func floorDiv(_ a: Int64, _ b: Int64) -> Int64 {
        let q = a / b
        return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q
    }

    /// The decimal digits of `value`, with zeros in front up to `width` characters.
    private static func appendPadded(_ value: Int64, _ width: Int, to bytes: inout [UInt8]) {
        guard value >= 0, value < 1_000_000 else {
            let digits = Array(String(value).utf8)
            bytes.append(contentsOf: repeatElement(UInt8(ascii: "0"), count: max(0, width - digits.count)))
            bytes.append(contentsOf: digits)
            return
        }
        var divisor: Int64 = 100_000
        var length = 6
        while length > 1, value < divisor {
            divisor /= 10
            length -= 1
        }
        bytes.append(contentsOf: repeatElement(UInt8(ascii: "0"), count: max(0, width - length)))
        var rest = value
        while divisor > 0 {
            bytes.append(UInt8(ascii: "0") + UInt8(rest / divisor))
            rest %= divisor
            divisor /= 10
        }
    }
}

/// A cursor over ASCII bytes for the fixed-width fields of a date-time.
private struct DigitScanner {
    private let bytes: UnsafeBufferPointer<UInt8>
    private var index = 0
    init(_ bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    var atEnd: Bool { index == bytes.count }

    mutating func digit() -> Int64? {
        guard index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) else { return nil }
        defer { index += 1 }
        return Int64(bytes[index] - UInt8(ascii: "0"))
    }

    mutating func number(digits: Int) -> Int64? {
        var value: Int64 = 0
        for _ in 0..<digits {
            guard let digit = digit() else { return nil }
            value = value * 10 + digit
        }
        return value
    }

    mutating func expect(_ character: Unicode.Scalar) -> Bool {
        guard index < bytes.count, bytes[index] == UInt8(ascii: character) else { return false }
        index += 1
        return true
    }

    mutating func expect(anyOf characters: StaticString) -> Bool {
        guard index < bytes.count else { return false }
        let found = characters.withUTF8Buffer { $0.contains(bytes[index]) }
        if found { index += 1 }
        return found
    }

    mutating func sign() -> Int64? {
        if expect("+") { return 1 }
        if expect("-") { return -1 }
        return nil
    }
}
