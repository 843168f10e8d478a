import HealthModel

/// A value from the bus that does not have the shape or meaning a method needs: its
/// description is the one-line message of the InvalidArgs error.
public struct WireError: Error, Sendable, Hashable, CustomStringConvertible {
    public var description: String

    public init(_ description: String) { self.description = description }
}

extension SampleType {
    /// The type a call names, or a one-line reason that lists the known ones.
    public static func parse(_ name: String) throws(WireError) -> SampleType {
        guard let type = SampleType(identifier: name) else {
            throw WireError("unknown type \(name.quoted) (known: \(SampleType.all.map(\.identifier).joined(separator: ", ")))")
        }
        return type
    }

    /// The quantity type a call names (what sample queries, saves and statistics take), or a
    /// one-line reason.
    public static func parseQuantity(_ name: String) throws(WireError) -> SampleType {
        let type = try parse(name)
        guard type.kind == .quantity else {
            throw WireError("\(name.quoted) is not a quantity type (known: \(SampleType.quantityTypes.map(\.identifier).joined(separator: ", "))); workouts have requests of their own")
        }
        return type
    }
}

extension String {
    /// Characters of a caller's text an error message quotes at most.
    public static let quotedPrefixLength = 40

    /// The text as an error message quotes it: in single quotes, its first
    /// ``quotedPrefixLength`` characters with control characters, quotes and backslashes
    /// escaped (`\u{1}`), and the full length in bytes when it was cut. An error never repeats
    /// a caller's whole input, so no input can make a reply larger than the call.
    public var quoted: String {
        var escaped = ""
        var count = 0
        for scalar in unicodeScalars {
            guard count < Self.quotedPrefixLength else {
                return "'\(escaped)…' (\(utf8.count) bytes)"
            }
            switch scalar {
            case "'", "\\": escaped += "\\\(scalar)"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F || (0x80...0x9F).contains(scalar.value):
                escaped += "\\u{\(String(scalar.value, radix: 16))}"
            default: escaped.unicodeScalars.append(scalar)
            }
            count += 1
        }
        return "'\(escaped)'"
    }
}

