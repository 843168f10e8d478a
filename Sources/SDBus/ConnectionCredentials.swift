/// What the bus daemon knows of a connection (`org.freedesktop.DBus.GetConnectionCredentials`),
/// taken from the kernel when the connection was made (`SO_PEERCRED`, `SO_PEERSEC`): nothing
/// the peer says about itself.
public struct DBusConnectionCredentials: Sendable, Hashable {
    /// `UnixUserID`.
    public var unixUserID: UInt32?
    /// `ProcessID`: the process that connected, in the bus daemon's PID namespace. It may have
    /// exited since, and its number been given to another process: pin it (`pidfd_open`) and
    /// check the connection is still there before trusting what its /proc says.
    public var processID: UInt32?
    /// `LinuxSecurityLabel`: the LSM label of the peer (AppArmor's `snap.pulse.pulse (enforce)`,
    /// an SELinux context), without the trailing NUL the bus daemon sends.
    public var securityLabel: String?

    public init(unixUserID: UInt32? = nil, processID: UInt32? = nil, securityLabel: String? = nil) {
        self.unixUserID = unixUserID
        self.processID = processID
        self.securityLabel = securityLabel
    }

    /// The credentials of a `GetConnectionCredentials` reply (`a{sv}`); unknown keys are ignored.
    public init(reply value: DBusValue) throws(DBusError) {
        guard let entries = value.stringKeyed else {
            throw .unexpectedReply("GetConnectionCredentials returned \(value.signature), not a{sv}")
        }
        unixUserID = entries["UnixUserID"]?.integer.flatMap { UInt32(exactly: $0) }
        processID = entries["ProcessID"]?.integer.flatMap { UInt32(exactly: $0) }
        if var label = entries["LinuxSecurityLabel"]?.bytes {
            while label.last == 0 { label.removeLast() }
            securityLabel = String(decoding: label, as: UTF8.self)
        }
    }
}

extension DBusConnection {
    /// The bus daemon's credentials of the connection `name` (a unique name such as a caller's
    /// `DBusMethodCall.sender`). Asked anew each time; the caller remembers what it needs.
    /// Throws the bus daemon's `org.freedesktop.DBus.Error.NameHasNoOwner` once the
    /// connection is gone.
    public func credentials(of name: String) async throws(DBusError) -> DBusConnectionCredentials {
        let reply = try await call(
            destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
            member: "GetConnectionCredentials", arguments: [.string(name)])
        guard let value = reply.first else { throw .unexpectedReply("GetConnectionCredentials returned nothing") }
        return try DBusConnectionCredentials(reply: value)
    }
}
