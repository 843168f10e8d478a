/// A signal as received: who sent it, from which object, and its arguments.
public struct DBusSignal: Sendable, Hashable {
    /// The sender's unique name (`:1.42`).
    public var sender: String
    public var path: String
    public var interface: String
    public var member: String
    public var arguments: [DBusValue]

    public init(sender: String, path: String, interface: String, member: String, arguments: [DBusValue]) {
        self.sender = sender
        self.path = path
        self.interface = interface
        self.member = member
        self.arguments = arguments
    }
}

/// Which signals a subscription receives, as a D-Bus match rule. Unset fields match anything.
public struct DBusMatchRule: Sendable, Hashable, CustomStringConvertible {
    /// A well-known or unique name; the bus daemon resolves well-known names to their current owner.
    public var sender: String?
    public var path: String?
    /// Matches the path and every object below it.
    public var pathNamespace: String?
    public var interface: String?
    public var member: String?
    /// The first argument, when it is a string (NameOwnerChanged's name, PropertiesChanged's interface).
    public var arg0: String?

    public init(
        sender: String? = nil, path: String? = nil, pathNamespace: String? = nil, interface: String? = nil,
        member: String? = nil, arg0: String? = nil
    ) {
        self.sender = sender
        self.path = path
        self.pathNamespace = pathNamespace
        self.interface = interface
        self.member = member
        self.arg0 = arg0
    }

    /// The rule as the bus daemon takes it: `type='signal',sender='org.bluez',…`.
    public var description: String {
        var parts = ["type='signal'"]
        let fields: [(String, String?)] = [
            ("sender", sender), ("path", path), ("path_namespace", pathNamespace), ("interface", interface),
            ("member", member), ("arg0", arg0),
        ]
        for case (let key, let value?) in fields {
            parts.append("\(key)='\(value.replacingOccurrences(of: "'", with: "'\\''"))'")
        }
        return parts.joined(separator: ",")
    }
}

private extension String {
    func replacingOccurrences(of target: String, with replacement: String) -> String {
        split(separator: target, omittingEmptySubsequences: false).joined(separator: replacement)
    }
}
