import CSystemd
@preconcurrency import Glibc

/// One interface exported at one path: its vtable, its sd-bus slot and the stream its calls
/// go to. Lives on the loop thread, in `BusEventLoop.exports`, from `export` to `removeExport`.
final class ExportedObject {
    let id: UInt64
    let path: String
    let interface: DBusInterfaceDescription
    let calls: AsyncStream<DBusMethodCall>.Continuation
    let limits: DBusCallLimits
    let vtable: ObjectVTable
    var slot: OpaquePointer?
    unowned let loop: BusEventLoop
    private let properties: [String: DBusInterfaceDescription.Property]

    init(
        id: UInt64, path: String, interface: DBusInterfaceDescription, calls: AsyncStream<DBusMethodCall>.Continuation,
        limits: DBusCallLimits, loop: BusEventLoop
    ) {
        self.id = id
        self.path = path
        self.interface = interface
        self.calls = calls
        self.limits = limits
        self.loop = loop
        properties = Dictionary(interface.properties.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        vtable = ObjectVTable(interface, methodHandler: { message, userdata, _ in
            guard let message, let userdata else { return -EINVAL }
            let object = Unmanaged<ExportedObject>.fromOpaque(userdata).takeUnretainedValue()
            return object.loop.receiveCall(message, for: object)
        }, propertyGetter: { _, _, _, property, reply, userdata, _ in
            guard let property, let reply, let userdata else { return -EINVAL }
            return Unmanaged<ExportedObject>.fromOpaque(userdata).takeUnretainedValue().appendProperty(String(cString: property), to: reply)
        })
    }

    /// Appends a property's value to a Properties.Get/GetAll reply (sd-bus opened the variant).
    private func appendProperty(_ name: String, to reply: OpaquePointer) -> Int32 {
        guard let property = properties[name] else { return -ENOENT }
        do {
            try MessageWriter(message: reply).append(property.valueToSend)
        } catch {
            if case .system(_, let code) = error { return -code }
            return -EINVAL
        }
        return 1
    }
}

/// A call received and not answered yet: the message to answer, whose it is, and the
/// largest reply it may get.
struct IncomingCall {
    let message: OpaquePointer
    let uid: UInt32
    let replyBytes: Int
    /// About what its decoded arguments occupy.
    let argumentBytes: Int
    /// The file descriptors among them.
    let descriptors: Int
}

/// The bounds an exported object puts on its callers, so that no caller (nor any one user) can
/// take the service's memory, its queue or its place on the bus from the others.
public struct DBusCallLimits: Sendable, Hashable {
    /// Calls received and not yet taken by the service; more are answered LimitsExceeded.
    public var pendingCalls: Int
    /// Calls of one uid received and not yet answered (however many connections it opens);
    /// more are answered LimitsExceeded at once, without being decoded.
    public var callsPerUser: Int
    /// What one call's arguments may hold; more is answered LimitsExceeded without being
    /// decoded further.
    public var arguments: DBusDecodeBudget
    /// About how many bytes the decoded arguments of one uid's unanswered calls may occupy
    /// together; a call of a uid over it is answered LimitsExceeded without being decoded.
    public var argumentBytesPerUser: Int
    /// The same over all callers.
    public var argumentBytesInAll: Int
    /// File descriptors one uid's unanswered calls may hold (each is open until the call is
    /// answered); a call of a uid over it is answered LimitsExceeded.
    public var descriptorsPerUser: Int
    /// The same over all callers: with the service's own, what its descriptor limit must hold.
    public var descriptorsInAll: Int
    /// The largest reply body sent; a larger reply becomes LimitsExceeded (the bus daemon
    /// disconnects a connection that sends a message over its limit, 32 MiB by default).
    public var replyBytes: Int

    public init(
        pendingCalls: Int, callsPerUser: Int, arguments: DBusDecodeBudget, argumentBytesPerUser: Int = .max,
        argumentBytesInAll: Int = .max, descriptorsPerUser: Int = .max, descriptorsInAll: Int = .max, replyBytes: Int
    ) {
        self.pendingCalls = pendingCalls
        self.callsPerUser = callsPerUser
        self.arguments = arguments
        self.argumentBytesPerUser = argumentBytesPerUser
        self.argumentBytesInAll = argumentBytesInAll
        self.descriptorsPerUser = descriptorsPerUser
        self.descriptorsInAll = descriptorsInAll
        self.replyBytes = replyBytes
    }

    /// Bytes of an error reply's message at most (longer ones are cut, marked with "…").
    public static let errorMessageBytes = 1024
    /// The largest signal body sent.
    public static let signalBytes = 1 << 20
    static let limitsExceeded = "org.freedesktop.DBus.Error.LimitsExceeded"
}

// MARK: Exported objects (loop thread only)

extension BusEventLoop {
    /// Registers `interface` at `path`; its calls go to `calls`.
    func export(
        id: UInt64, path: String, interface: DBusInterfaceDescription, calls: AsyncStream<DBusMethodCall>.Continuation,
        limits: DBusCallLimits
    ) -> Result<Void, DBusError> {
        guard let bus else {
            calls.finish()
            return .failure(.disconnected)
        }
        let object = ExportedObject(id: id, path: path, interface: interface, calls: calls, limits: limits, loop: self)
        var slot: OpaquePointer?
        let userdata = Unmanaged.passUnretained(object).toOpaque()
        let added = sd_bus_add_object_vtable(bus, &slot, path, interface.name, object.vtable.entries, userdata)
        guard added >= 0, let slot else {
            calls.finish()
            return .failure(.system(operation: "sd_bus_add_object_vtable(\(path), \(interface.name))", errno: -added))
        }
        object.slot = slot
        exports[id] = object
        guardStandardInterfaces()
        return .success(())
    }

    /// Unregisters an exported object (its stream ended). Calls already taken can still be answered.
    func removeExport(id: UInt64) {
        guard let object = exports.removeValue(forKey: id) else { return }
        if let slot = object.slot { sd_bus_slot_unref(slot) }
        object.slot = nil
        object.calls.finish()
    }

    /// Unregisters every object and forgets every unanswered call (the bus is closing).
    func removeAllExports() {
        for id in Array(exports.keys) { removeExport(id: id) }
        for (_, call) in incomingCalls { sd_bus_message_unref(call.message) }
        incomingCalls.removeAll()
        callLedger.removeAll()
    }

    /// The vtable's method handler: a call that passed sd-bus's signature check. Returns 1
    /// ("handled"): the answer is sent later by `answerCall`, or now when the call is refused.
    fileprivate func receiveCall(_ message: OpaquePointer, for object: ExportedObject) -> Int32 {
        func field(_ value: UnsafePointer<CChar>?) -> String { value.map { String(cString: $0) } ?? "" }
        let sender = field(sd_bus_message_get_sender(message))
        let uid: UInt32
        switch senderUID(of: message, sender: sender) {
        case .success(let known): uid = known
        case .failure(let error):
            sendError(to: message, name: DBusMethodCall.failed, message: "the caller could not be identified: \(error)")
            return 1
        }
        if let refusal = callLedger.refusal(of: uid, under: object.limits, interface: object.interface.name) {
            sendError(to: message, name: DBusCallLimits.limitsExceeded, message: refusal)
            return 1
        }
        let arguments: [DBusValue]
        let allowance = DecodeAllowance(object.limits.arguments)
        do {
            arguments = try MessageReader(message: message, allowance: allowance).readAll()
        } catch {
            if case .overBudget(let exceeded) = error {
                sendError(to: message, name: DBusCallLimits.limitsExceeded, message: "\(exceeded); send less in one call")
            } else {
                sendError(to: message, name: "org.freedesktop.DBus.Error.InvalidArgs", message: "\(error)")
            }
            return 1
        }
        let id = makeIdentifier()
        let cost = allowance.decodedBytes
        incomingCalls[id] = IncomingCall(
            message: sd_bus_message_ref(message), uid: uid, replyBytes: object.limits.replyBytes, argumentBytes: cost,
            descriptors: allowance.descriptors)
        callLedger.take(uid, bytes: cost, descriptors: allowance.descriptors)
        let call = DBusMethodCall(
            loop: self, id: id, member: field(sd_bus_message_get_member(message)), sender: sender, senderUID: uid,
            arguments: arguments, allowsInteractiveAuthorization: sd_bus_message_get_allow_interactive_authorization(message) > 0)
        switch object.calls.yield(call) {
        case .enqueued:
            break
        case .dropped(let refused):
            refused.answerOnLoopThread(.error(
                name: DBusCallLimits.limitsExceeded,
                message: "\(object.interface.name) at \(object.path) has too many calls waiting"))
        case .terminated:
            call.answerOnLoopThread(.error(
                name: "org.freedesktop.DBus.Error.UnknownObject", message: "\(object.path) is no longer served"))
        @unknown default:
            call.answerOnLoopThread(.error(name: DBusMethodCall.failed, message: "the call could not be queued"))
        }
        return 1
    }

    /// The caller's effective uid, from the bus daemon (no SD_BUS_CREDS_AUGMENT: nothing is read
    /// from /proc). A sender's first call costs one synchronous `GetConnectionUnixUser` round
    /// trip to the bus daemon on the loop thread; its later calls come from the cache. dbus-daemon reports only the uid of the caller's socket credentials
    /// (`UnixUserID`, which sd-bus files as EUID); sd-bus cannot know the real uid without
    /// /proc, so the EUID is what a service authorizes.
    private func senderUID(of message: OpaquePointer, sender: String) -> Result<UInt32, DBusError> {
        if let uid = senderUIDs[sender] { return .success(uid) }
        var creds: OpaquePointer?
        let queried = sd_bus_query_sender_creds(message, UInt64(SD_BUS_CREDS_EUID), &creds)
        guard queried >= 0, let creds else { return .failure(.system(operation: "sd_bus_query_sender_creds", errno: -queried)) }
        defer { sd_bus_creds_unref(creds) }
        var uid = uid_t.max
        let read = sd_bus_creds_get_euid(creds, &uid)
        guard read >= 0 else { return .failure(.system(operation: "sd_bus_creds_get_euid", errno: -read)) }
        if !sender.isEmpty { senderUIDs.insert(uid, for: sender) }
        return .success(uid)
    }

    /// Sends the answer to an incoming call and lets the call go. A reply whose values do not
    /// fit the method's output signature becomes an error reply.
    func answerCall(id: UInt64, with answer: DBusMethodCall.Answer) {
        guard let call = incomingCalls.removeValue(forKey: id) else { return }
        let message = call.message
        defer { sd_bus_message_unref(message) }
        callLedger.release(call.uid, bytes: call.argumentBytes, descriptors: call.descriptors)
        guard let bus else { return }
        switch answer {
        case .values(let values):
            var reply: OpaquePointer?
            let created = sd_bus_message_new_method_return(message, &reply)
            guard created >= 0, let reply else {
                return sendError(to: message, name: DBusMethodCall.failed, message: "the reply could not be built (errno \(-created))")
            }
            defer { sd_bus_message_unref(reply) }
            do {
                // Measured as it is built: a reply over the budget stops being built, unsent.
                try MessageWriter(message: reply, limit: call.replyBytes).append(values)
                try check(sd_bus_send(bus, reply, nil), "sd_bus_send")
            } catch .overBudget {
                sendError(
                    to: message, name: DBusCallLimits.limitsExceeded,
                    message: "the reply would be over the \(call.replyBytes) bytes one reply may carry; ask for less in one call")
            } catch {
                let signature = values.map(\.signature).joined()
                sendError(to: message, name: DBusMethodCall.failed, message: "the service's reply '\(signature)' could not be sent: \(error)")
            }
        case .error(let name, let text):
            sendError(to: message, name: name, message: text)
        }
    }

    /// Answers `call` with an error; an error name sd-bus refuses becomes `Error.Failed`.
    func sendError(to call: OpaquePointer, name: String, message fullText: String) {
        let text = boundedErrorText(fullText)
        var error = sd_bus_error()
        defer { sd_bus_error_free(&error) }
        _ = sd_bus_error_set(&error, name, text)  // returns the errno the name maps to, not a failure
        if sd_bus_reply_method_error(call, &error) >= 0 { return }
        var fallback = sd_bus_error()
        defer { sd_bus_error_free(&fallback) }
        _ = sd_bus_error_set(&fallback, DBusMethodCall.failed, "\(name): \(text)")
        _ = sd_bus_reply_method_error(call, &fallback)
    }

    /// This connection's unique name (`:1.42`).
    func uniqueName() -> Result<String, DBusError> {
        guard let bus else { return .failure(.disconnected) }
        var name: UnsafePointer<CChar>?
        let read = sd_bus_get_unique_name(bus, &name)
        guard read >= 0, let name else { return .failure(.system(operation: "sd_bus_get_unique_name", errno: -read)) }
        return .success(String(cString: name))
    }
}

// MARK: The standard interfaces sd-bus answers itself

extension BusEventLoop {
    /// The longest interface or member name D-Bus allows.
    static let maximumNameLength = 255

    /// Installs, once, a filter that refuses `org.freedesktop.DBus.Properties` calls naming an
    /// interface or property longer than a D-Bus name can be: sd-bus answers those calls from
    /// the vtables itself, quoting the names it did not find, so a caller's 16 MiB "property
    /// name" would come back as a reply over the bus's message limit, and the bus daemon
    /// disconnects whoever sends one.
    func guardStandardInterfaces() {
        guard propertiesGuard == nil, let bus else { return }
        var slot: OpaquePointer?
        let userdata = Unmanaged.passUnretained(self).toOpaque()
        let added = sd_bus_add_filter(bus, &slot, { message, userdata, _ in
            guard let message, let userdata else { return 0 }
            return Unmanaged<BusEventLoop>.fromOpaque(userdata).takeUnretainedValue().refuseOverlongNames(message)
        }, userdata)
        if added >= 0 { propertiesGuard = slot }
    }

    /// 1 (handled: refused) for a Properties call with an over-long name; else 0, the message
    /// read back to its start for sd-bus.
    private func refuseOverlongNames(_ message: OpaquePointer) -> Int32 {
        guard sd_bus_message_is_method_call(message, "org.freedesktop.DBus.Properties", nil) > 0 else { return 0 }
        var overlong = false
        for _ in 0..<2 {
            var type: CChar = 0
            guard sd_bus_message_peek_type(message, &type, nil) > 0, type == typeCode("s") else { break }
            var text: UnsafePointer<CChar>?
            guard sd_bus_message_read_basic(message, typeCode("s"), &text) > 0, let text else { break }
            if strlen(text) > Self.maximumNameLength {
                overlong = true
                break
            }
        }
        sd_bus_message_rewind(message, 1)
        guard overlong else { return 0 }
        sendError(
            to: message, name: "org.freedesktop.DBus.Error.InvalidArgs",
            message: "interface and property names have at most \(Self.maximumNameLength) bytes")
        return 1
    }
}
