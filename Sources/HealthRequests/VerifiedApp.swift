import HealthModel
/// The application part of a source that the service took from a label the caller cannot
/// choose, rather than from the name the caller passed: `KIND:NAME`, such as
/// `flatpak:org.example.Pulse`, `snap:pulse` or `unit:hrm-export.service`.
///
/// A self-declared application name (`AppName`) never contains `:`, so the two never meet:
/// whether a source is verified is read off its name alone.
public struct VerifiedApp: Sendable, Hashable, CustomStringConvertible {
    public enum Kind: String, Sendable, CaseIterable {
        /// A Flatpak application: its app id (`/.flatpak-info`, `[Application] name=`).
        case flatpak
        /// A snap: its snap name, from its AppArmor label `snap.NAME.APP`.
        case snap
        /// A systemd service: its unit, from its cgroup.
        case unit
    }

    public let kind: Kind
    public let name: String

    /// A verified application, when `name` is a well-formed name of `kind`.
    public init?(kind: Kind, name: String) {
        guard Self.isWellFormed(name, kind: kind) else { return nil }
        self.kind = kind
        self.name = name
    }

    /// The application part of a source: `KIND:NAME`.
    public var description: String { "\(kind.rawValue):\(name)" }

    /// The application part `KIND:NAME` read back, or nil when it is not one.
    public init?(applicationPart part: Substring) {
        guard let colon = part.firstIndex(of: ":"), let kind = Kind(rawValue: String(part[..<colon])) else { return nil }
        self.init(kind: kind, name: String(part[part.index(after: colon)...]))
    }

    /// Whether `source` (`USER/APP`) has a verified application part.
    public static func isVerified(source: String) -> Bool {
        guard let app = AppName.parts(of: source)?.app else { return false }
        return VerifiedApp(applicationPart: app) != nil
    }

    static func isWellFormed(_ name: String, kind: Kind) -> Bool {
        let bytes = Array(name.utf8)
        func isAlphanumeric(_ byte: UInt8) -> Bool {
            (0x61...0x7A).contains(byte) || (0x41...0x5A).contains(byte) || (0x30...0x39).contains(byte)
        }
        switch kind {
        case .flatpak:
            // Flatpak's application ids: D-Bus-name-like, at least two elements, at most 255 bytes.
            let elements = name.split(separator: ".", omittingEmptySubsequences: false)
            return bytes.count <= 255 && elements.count >= 2
                && elements.allSatisfy { element in
                    guard let first = element.utf8.first, !(0x30...0x39).contains(first) else { return false }
                    return element.utf8.allSatisfy { isAlphanumeric($0) || $0 == 0x5F || $0 == 0x2D }
                }
        case .snap:
            // Snap names [a-z0-9-] (at most 40), with a parallel install's `_KEY` ([a-z0-9]{1,10}).
            let parts = name.split(separator: "_", omittingEmptySubsequences: false)
            func lower(_ text: Substring) -> Bool {
                text.utf8.allSatisfy { (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) }
            }
            guard let snap = parts.first, (1...40).contains(snap.utf8.count), parts.count <= 2,
                  snap.utf8.allSatisfy({ (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) || $0 == 0x2D }),
                  !snap.hasPrefix("-"), !snap.hasSuffix("-")
            else { return false }
            return parts.count == 1 || ((1...10).contains(parts[1].utf8.count) && lower(parts[1]))
        case .unit:
            // systemd's unit names: [A-Za-z0-9:_.\@-], at most 255 bytes; only services count.
            return bytes.count <= 255 && name.hasSuffix(".service") && name.utf8.count > ".service".utf8.count
                && bytes.allSatisfy { isAlphanumeric($0) || ":_.\\@-".utf8.contains($0) }
        }
    }
}
