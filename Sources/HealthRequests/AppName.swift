import HealthModel
/// The application part of a caller's source `USER/APP`: what the caller names itself,
/// `[a-z0-9][a-z0-9._-]{0,63}`. It separates the applications of one user; it is not a
/// security boundary between them (the uid is). It never contains `:`, which marks an
/// application part the service took from a label instead (`VerifiedApp`).
public enum AppName {
    public static let maximumLength = 64

    /// Checks `name`, with a one-line reason when it is not an application name.
    public static func validate(_ name: String) throws(WireError) {
        let bytes = Array(name.utf8)
        guard let first = bytes.first else { throw WireError("the application name is empty") }
        guard bytes.count <= maximumLength else {
            throw WireError("the application name is longer than \(maximumLength) characters")
        }
        func lowercaseOrDigit(_ byte: UInt8) -> Bool { (0x61...0x7A).contains(byte) || (0x30...0x39).contains(byte) }
        guard lowercaseOrDigit(first), bytes.allSatisfy({ lowercaseOrDigit($0) || $0 == 0x2E || $0 == 0x5F || $0 == 0x2D }) else {
            throw WireError("bad application name \(name.quoted): it must match [a-z0-9][a-z0-9._-]{0,63}")
        }
    }

    /// The user and application parts of a source `USER/APP` (split at the first `/`), or nil
    /// when it has no `/` (the daemon's own source).
    public static func parts(of source: String) -> (user: Substring, app: Substring)? {
        guard let slash = source.firstIndex(of: "/") else { return nil }
        return (source[..<slash], source[source.index(after: slash)...])
    }

    /// The source of application `app` run by `user`: `USER/APP`.
    public static func source(user: String, app: String) -> String { "\(user)/\(app)" }
}
