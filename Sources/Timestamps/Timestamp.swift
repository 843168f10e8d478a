/// A point in time as microseconds since the Unix epoch (UTC). Pure and exact, so frames,
/// traces and stored samples agree to the microsecond.
public struct Timestamp: RawRepresentable, Sendable, Hashable, Comparable, CustomStringConvertible {
    public let rawValue: Int64
    public init(rawValue: Int64) { self.rawValue = rawValue }
    public init(microsecondsSinceEpoch: Int64) { self.rawValue = microsecondsSinceEpoch }
    public init(secondsSinceEpoch seconds: Double) { self.rawValue = Int64((seconds * 1_000_000).rounded()) }

    public var microsecondsSinceEpoch: Int64 { rawValue }
    public var secondsSinceEpoch: Double { Double(rawValue) / 1_000_000 }

    /// This time moved by a number of seconds (negative moves back).
    public func advanced(bySeconds seconds: Double) -> Timestamp {
        Timestamp(rawValue: rawValue + Int64((seconds * 1_000_000).rounded()))
    }

    public static func < (lhs: Timestamp, rhs: Timestamp) -> Bool { lhs.rawValue < rhs.rawValue }
    public var description: String { RFC3339.string(from: self) }
}

extension Timestamp: Codable {
    /// A time travels as microseconds since the Unix epoch.
    public init(from decoder: any Decoder) throws {
        self.init(microsecondsSinceEpoch: try decoder.singleValueContainer().decode(Int64.self))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(microsecondsSinceEpoch)
    }
}
