import Glibc

/// A gateway's name, which both `[mqtt]` and `[sync]` use for this hrmd: 1…64 characters of
/// `[a-z0-9_-]`, by default this machine's host name made into one.
public enum GatewayName {
    /// The longest name, in bytes.
    public static let maxLength = 64

    /// Whether `value` is a name as the configuration takes it.
    public static func isValid(_ value: String) -> Bool {
        !value.isEmpty && value.utf8.count <= maxLength && value.utf8.allSatisfy(isNameByte)
    }

    /// This machine's host name, as a gateway name: the name of a section that names none.
    public static func ofThisHost() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return from(hostName: "") }
        return from(hostName: String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
    }

    /// A host name as a gateway name: its first label in lower case, anything outside
    /// `[a-z0-9_-]` as `-`, no leading `-`, at most 64 characters; `hrmd` when nothing is left.
    public static func from(hostName: String) -> String {
        let host = hostName.split(separator: ".").first.map(String.init) ?? hostName
        var name = String(
            host.lowercased().unicodeScalars.map { scalar -> Character in
                switch scalar {
                case "a"..."z", "0"..."9", "_", "-": Character(scalar)
                default: "-"
                }
            }
        ).prefix(maxLength)
        while name.hasPrefix("-") { name = name.dropFirst() }
        return name.isEmpty ? "hrmd" : String(name)
    }

    private static func isNameByte(_ byte: UInt8) -> Bool {
        (byte >= 0x61 && byte <= 0x7A) || (byte >= 0x30 && byte <= 0x39) || byte == 0x5F || byte == 0x2D
    }
}
