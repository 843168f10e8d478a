import HealthRequests
import HealthWire

/// Reads application labels out of the texts Linux keeps them in. Pure: the caller reads the
/// files and the bus credentials (`PeerProcess`, `DBusConnection.credentials(of:)`).
enum AppLabels {
    /// The app id of a Flatpak sandbox from its `/.flatpak-info`, a GLib keyfile Flatpak writes:
    /// `name=` in group `[Application]`. Nil when the file names no (well-formed) application,
    /// such as a sandbox that runs a bare runtime (`[Runtime]` only).
    static func flatpakApp(fromInfo text: String) -> VerifiedApp? {
        var group = ""
        var name: String?
        for rawLine in text.split(omittingEmptySubsequences: true, whereSeparator: { $0 == "\n" || $0 == "\r\n" }) {
            let line = rawLine.drop(while: { $0 == " " || $0 == "\t" })
            if line.isEmpty || line.hasPrefix("#") { continue }
            if line.hasPrefix("[") {
                guard let close = line.firstIndex(of: "]") else { return nil }  // not a keyfile
                group = String(line[line.index(after: line.startIndex)..<close])
                continue
            }
            guard group == "Application", let equals = line.firstIndex(of: "=") else { continue }
            let key = line[..<equals].trimmingSpaces
            guard key == "name" else { continue }
            guard name == nil else { return nil }  // a key twice: not what Flatpak writes
            name = String(line[line.index(after: equals)...].trimmingSpaces)
        }
        return name.flatMap { VerifiedApp(kind: .flatpak, name: $0) }
    }

    /// The snap of an AppArmor label as the bus daemon reports it (`LinuxSecurityLabel`, the
    /// peer's `/proc/PID/attr/current` at connection time): `snap.NAME.APP (enforce)` for an
    /// application, `snap.NAME.hook.HOOK (enforce)` for a hook, `(complain)` in complain mode.
    /// Nil for any other label (`unconfined`, other profiles, SELinux contexts).
    static func snap(fromSecurityLabel label: String) -> VerifiedApp? {
        var profile = Substring(label)
        while let last = profile.last, last == "\0" || last == "\n" { profile = profile.dropLast() }
        if let space = profile.firstIndex(of: " ") {
            let mode = profile[profile.index(after: space)...]
            guard mode.hasPrefix("("), mode.hasSuffix(")") else { return nil }
            profile = profile[..<space]
        }
        let parts = profile.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.first == "snap" else { return nil }
        let wellFormed: Bool
        switch parts.count {
        case 3: wellFormed = isSnapWord(parts[2])  // snap.NAME.APP
        case 4: wellFormed = parts[2] == "hook" && isSnapWord(parts[3])  // snap.NAME.hook.HOOK
        default: wellFormed = false
        }
        guard wellFormed else { return nil }
        return VerifiedApp(kind: .snap, name: String(parts[1]))
    }

    /// An app or hook name: letters, digits and inner dashes.
    private static func isSnapWord(_ word: Substring) -> Bool {
        !word.isEmpty && !word.hasPrefix("-") && !word.hasSuffix("-")
            && word.utf8.allSatisfy { (0x61...0x7A).contains($0) || (0x41...0x5A).contains($0) || (0x30...0x39).contains($0) || $0 == 0x2D }
    }

    /// The systemd service a process runs in, from its `/proc/PID/cgroup`: the unified
    /// hierarchy's line `0::PATH`. Below the root, slices (`system.slice`,
    /// `system-getty.slice`) are skipped and the first other component is the unit; a
    /// `.service` is the answer (a `.scope`, such as a login session, is none). Processes
    /// below a service's own cgroup (a delegated subtree) belong to that service.
    ///
    /// In `user@UID.service`, a user's service manager, the unit of the process within it
    /// counts instead (`user@1000.service/app.slice/sync.service` → `sync.service`), only
    /// when UID is `uid` (the caller's own manager): `user@UID.service` itself is none.
    static func serviceUnit(fromCgroup text: String, uid: UInt32) -> VerifiedApp? {
        var path: Substring?
        for line in text.split(separator: "\n") where line.hasPrefix("0::") {
            guard path == nil else { return nil }
            path = line.dropFirst(3)
        }
        guard let path, path.hasPrefix("/") else { return nil }
        var components = path.split(separator: "/")[...]
        guard let unit = firstUnit(of: &components) else { return nil }
        if unit.hasPrefix("user@") {
            guard unit == "user@\(uid).service", let inner = firstUnit(of: &components) else { return nil }
            return inner.hasSuffix(".service") ? VerifiedApp(kind: .unit, name: String(inner)) : nil
        }
        return unit.hasSuffix(".service") ? VerifiedApp(kind: .unit, name: String(unit)) : nil
    }

    /// The first component that is not a slice, taken off the front of `components`.
    private static func firstUnit(of components: inout ArraySlice<Substring>) -> Substring? {
        while let first = components.popFirst() {
            if !first.hasSuffix(".slice") { return first }
        }
        return nil
    }
}

extension Substring {
    fileprivate var trimmingSpaces: Substring {
        var text = drop(while: { $0 == " " || $0 == "\t" })
        while let last = text.last, last == " " || last == "\t" { text = text.dropLast() }
        return text
    }
}
