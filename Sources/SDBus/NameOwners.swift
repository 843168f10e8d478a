import CSystemd
@preconcurrency import Glibc

/// Who owns each well-known name a subscription names as its sender, as the bus daemon says:
/// the reply to `GetNameOwner` when the name is first followed, then its `NameOwnerChanged`
/// signals (taken only from the bus daemon itself). Loop-thread state of a `BusEventLoop`.
struct NameOwners {
    struct Followed {
        /// The owner's unique name; nil while nobody owns the name.
        var owner: String?
        /// Subscriptions that name it.
        var subscribers: Int
        /// The match for its NameOwnerChanged signals.
        var slot: OpaquePointer?
    }

    var followed: [String: Followed] = [:]

    /// The bus daemon's own name: the sender of every message it sends.
    static let busDaemon = "org.freedesktop.DBus"
}

extension BusEventLoop {
    /// Whether a signal from `sender` is one from `named` (a subscription's sender): the bus
    /// daemon and unique names by equality, a well-known name by its owner now.
    func isTrue(sender: String, named: String?) -> Bool {
        guard let named else { return true }
        if named == NameOwners.busDaemon || named.hasPrefix(":") { return sender == named }
        guard let owner = nameOwners.followed[named]?.owner else { return false }
        return sender == owner
    }

    /// Starts following the owner of `name` (a well-known name; others need no following):
    /// the NameOwnerChanged match is sent first, then GetNameOwner, which the bus daemon
    /// answers after installing the match, so no change of owner falls between the two.
    func followOwner(of name: String) {
        guard name != NameOwners.busDaemon, !name.hasPrefix(":"), let bus else { return }
        if var known = nameOwners.followed[name] {
            known.subscribers += 1
            nameOwners.followed[name] = known
            return
        }
        let rule = DBusMatchRule(
            sender: NameOwners.busDaemon, path: "/org/freedesktop/DBus", interface: NameOwners.busDaemon,
            member: "NameOwnerChanged", arg0: name)
        var slot: OpaquePointer?
        let userdata = Unmanaged.passUnretained(self).toOpaque()
        let added = sd_bus_add_match_async(bus, &slot, rule.description, { message, userdata, _ in
            guard let message, let userdata else { return 0 }
            Unmanaged<BusEventLoop>.fromOpaque(userdata).takeUnretainedValue().ownerChanged(message)
            return 0
        }, nil, userdata)
        nameOwners.followed[name] = NameOwners.Followed(owner: nil, subscribers: 1, slot: added >= 0 ? slot : nil)
        nameOwners.followed[name]?.owner = currentOwner(of: name, bus)
    }

    /// One subscription naming `name` ended; the last one stops the following.
    func stopFollowingOwner(of name: String) {
        guard var known = nameOwners.followed[name] else { return }
        known.subscribers -= 1
        if known.subscribers > 0 {
            nameOwners.followed[name] = known
            return
        }
        if let slot = known.slot { sd_bus_slot_unref(slot) }
        nameOwners.followed[name] = nil
    }

    /// The owner now, by a GetNameOwner round trip on the loop thread (nil: no owner, or no
    /// answer, in which case NameOwnerChanged will tell).
    private func currentOwner(of name: String, _ bus: OpaquePointer) -> String? {
        var creds: OpaquePointer?
        guard sd_bus_get_name_creds(bus, name, UInt64(SD_BUS_CREDS_UNIQUE_NAME), &creds) >= 0, let creds else { return nil }
        defer { sd_bus_creds_unref(creds) }
        var unique: UnsafePointer<CChar>?
        guard sd_bus_creds_get_unique_name(creds, &unique) >= 0, let unique else { return nil }
        return String(cString: unique)
    }

    /// A NameOwnerChanged for a followed name; believed only from the bus daemon.
    private func ownerChanged(_ message: OpaquePointer) {
        guard let sender = sd_bus_message_get_sender(message), isTrue(sender: String(cString: sender), named: NameOwners.busDaemon),
            let arguments = try? MessageReader(message: message).readAll(), arguments.count == 3,
            let name = arguments[0].string, let newOwner = arguments[2].string, nameOwners.followed[name] != nil
        else { return }
        nameOwners.followed[name]?.owner = newOwner.isEmpty ? nil : newOwner
    }
}
