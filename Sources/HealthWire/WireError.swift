import HealthStore

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
            throw WireError("unknown type '\(name)' (known: \(SampleType.all.map(\.identifier).joined(separator: ", ")))")
        }
        return type
    }
}
