/// One line of the serial heart-rate line protocol that simple sensors (microcontroller
/// boards) speak:
///
///     HR <bpm> [RR <ms> [<ms> …]] [BATT <percent>]
///
/// Keywords are case-insensitive and separated by spaces or tabs; `bpm` is 1…300, each RR
/// interval is in milliseconds (1…3000, oldest first), `BATT` is 0…100. The newline (`\n` or
/// `\r\n`) is not part of the line. Empty lines and lines starting with `#` carry nothing
/// (``isComment``). Examples: `HR 72`, `HR 72 RR 812 790`, `hr 64 batt 80`.
public struct SerialHeartRateLine: Sendable, Hashable {
    /// The heart rate in beats per minute; nil on a comment line.
    public var heartRate: Int?
    /// RR intervals in milliseconds, oldest first.
    public var rrIntervalsMilliseconds: [Int]
    /// The battery level in percent, when the line reports it.
    public var batteryPercent: Int?

    /// A line with these fields.
    public init(heartRate: Int?, rrIntervalsMilliseconds: [Int] = [], batteryPercent: Int? = nil) {
        self.heartRate = heartRate
        self.rrIntervalsMilliseconds = rrIntervalsMilliseconds
        self.batteryPercent = batteryPercent
    }

    /// Whether the line is empty or a `#` comment.
    public var isComment: Bool { heartRate == nil }

    /// Parses one line's bytes (a trailing `\r` is ignored).
    ///
    /// - Throws: ``SerialLineError`` saying what is wrong and where.
    public init(parsing bytes: some Collection<UInt8>) throws(SerialLineError) {
        guard let text = String(validating: Array(bytes), as: UTF8.self) else { throw .notText }
        let words = text.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\r" }).map { $0.uppercased() }
        guard let first = words.first, !first.hasPrefix("#") else {
            self.init(heartRate: nil)
            return
        }
        guard first == "HR" else { throw .unknownKeyword(String(first)) }
        var heartRate: Int?
        var rr: [Int] = []
        var battery: Int?
        var index = 0
        while index < words.count {
            let keyword = words[index]
            index += 1
            switch keyword {
            case "HR":
                guard heartRate == nil else { throw .repeatedKeyword("HR") }
                heartRate = try Self.number(words, at: index, field: "HR", range: 1...300)
                index += 1
            case "RR":
                guard rr.isEmpty else { throw .repeatedKeyword("RR") }
                while index < words.count, let value = Int(words[index]) {
                    guard (1...3000).contains(value) else { throw .outOfRange(field: "RR", value: words[index]) }
                    rr.append(value)
                    index += 1
                }
                guard !rr.isEmpty else { throw .missingValue(field: "RR") }
            case "BATT":
                guard battery == nil else { throw .repeatedKeyword("BATT") }
                battery = try Self.number(words, at: index, field: "BATT", range: 0...100)
                index += 1
            default:
                throw .unknownKeyword(keyword)
            }
        }
        self.init(heartRate: heartRate, rrIntervalsMilliseconds: rr, batteryPercent: battery)
    }

    private static func number(_ words: [String], at index: Int, field: String, range: ClosedRange<Int>) throws(SerialLineError) -> Int {
        guard index < words.count else { throw .missingValue(field: field) }
        guard let value = Int(words[index]) else { throw .notANumber(field: field, value: words[index]) }
        guard range.contains(value) else { throw .outOfRange(field: field, value: words[index]) }
        return value
    }

    /// The line as a sensor sends it (without the newline): `HR 72 RR 812 790`.
    public var text: String {
        guard let heartRate else { return "#" }
        var words = ["HR", String(heartRate)]
        if !rrIntervalsMilliseconds.isEmpty { words += ["RR"] + rrIntervalsMilliseconds.map(String.init) }
        if let batteryPercent { words += ["BATT", String(batteryPercent)] }
        return words.joined(separator: " ")
    }
}

/// What is wrong with a serial heart-rate line.
public enum SerialLineError: Error, Sendable, Hashable, CustomStringConvertible {
    case notText
    case unknownKeyword(String)
    case repeatedKeyword(String)
    case missingValue(field: String)
    case notANumber(field: String, value: String)
    case outOfRange(field: String, value: String)

    public var description: String {
        switch self {
        case .notText: "the line is not UTF-8 text"
        case .unknownKeyword(let word): "unknown keyword '\(word)' (expected HR, RR or BATT)"
        case .repeatedKeyword(let word): "\(word) appears twice"
        case .missingValue(let field): "\(field) has no value"
        case .notANumber(let field, let value): "\(field) value '\(value)' is not a whole number"
        case .outOfRange(let field, let value): "\(field) value \(value) is out of range"
        }
    }
}
