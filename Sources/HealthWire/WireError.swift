/// A value from the bus that does not have the shape or meaning a method needs: its
/// description is the one-line message of the InvalidArgs error.
public struct WireError: Error, Sendable, Hashable, CustomStringConvertible {
    public var description: String

    public init(_ description: String) { self.description = description }
}
