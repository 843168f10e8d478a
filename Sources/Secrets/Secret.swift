/// A value that must never be printed: a password, a connection string (which may carry one, and
/// names hosts and users), a token. Its description, debug description and reflection all read
/// `<redacted>`, so no log line, error or dump that interpolates it (or a value holding it) can
/// show it; the value itself is read only where it is handed to the library that needs it,
/// through ``revealed``.
public struct Secret: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    private let value: String

    public init(_ value: String) { self.value = value }

    /// The value itself: for the one call that needs it (libpq, libmosquitto), never for a message.
    public var revealed: String { value }

    public var description: String { "<redacted>" }
    public var debugDescription: String { "<redacted>" }
    public var customMirror: Mirror { Mirror(self, children: [], displayStyle: .struct) }
}
