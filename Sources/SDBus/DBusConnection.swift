import CSystemd

/// A connection to a D-Bus bus over sd-bus, as a client (calls, signals) and as a service
/// (exported objects, names, signals to one client). Safe to use from any task: every
/// operation is handed to the connection's own event-loop thread. Closed on `close()` or
/// when the last reference goes; when the bus goes away, pending calls fail with
/// `DBusError.disconnected` and every signal and method-call stream finishes.
public final class DBusConnection: Sendable {
    let loop: BusEventLoop

    /// The default timeout of a method call.
    public static let defaultTimeout: Duration = .seconds(25)

    private init(bus: OpaquePointer) throws(DBusError) {
        loop = try BusEventLoop(bus: bus)
    }

    /// Connects to the system bus (`DBUS_SYSTEM_BUS_ADDRESS` when set, else the standard socket).
    public static func system() throws(DBusError) -> DBusConnection {
        var bus: OpaquePointer?
        try check(sd_bus_open_system(&bus), "sd_bus_open_system")
        guard let bus else { throw .system(operation: "sd_bus_open_system", errno: 5) }
        return try DBusConnection(bus: bus)
    }

    /// Connects to the user's session bus (`DBUS_SESSION_BUS_ADDRESS` when set, else the
    /// user's bus under `XDG_RUNTIME_DIR`).
    public static func session() throws(DBusError) -> DBusConnection {
        var bus: OpaquePointer?
        try check(sd_bus_open_user(&bus), "sd_bus_open_user")
        guard let bus else { throw .system(operation: "sd_bus_open_user", errno: 5) }
        return try DBusConnection(bus: bus)
    }

    /// Connects to the bus at `address` (`unix:path=/run/dbus/system_bus_socket`).
    public static func connect(address: String) throws(DBusError) -> DBusConnection {
        var bus: OpaquePointer?
        try check(sd_bus_new(&bus), "sd_bus_new")
        guard let bus else { throw .system(operation: "sd_bus_new", errno: 12) }
        do {
            try check(sd_bus_set_address(bus, address), "sd_bus_set_address")
            try check(sd_bus_set_bus_client(bus, 1), "sd_bus_set_bus_client")
            try check(sd_bus_negotiate_fds(bus, 1), "sd_bus_negotiate_fds")
            try check(sd_bus_start(bus), "sd_bus_start")
        } catch {
            sd_bus_flush_close_unref(bus)
            throw error
        }
        return try DBusConnection(bus: bus)
    }

    deinit { loop.stop() }

    /// Whether the connection is still open.
    public var isOpen: Bool { loop.isOpen }

    /// Closes the connection: pending calls fail, signal streams finish.
    public func close() { loop.stop() }

    /// Calls a method and returns the reply's body. An error reply throws `DBusError.remote`
    /// with the error's name. Cancelling the task abandons the call at once (it throws
    /// `org.freedesktop.DBus.Error.NoReply`, "cancelled"): a call under way stops waiting for
    /// its reply, and a call whose task is already cancelled is not sent at all.
    public func call(
        destination: String, path: String, interface: String, member: String, arguments: [DBusValue] = [],
        timeout: Duration = DBusConnection.defaultTimeout
    ) async throws(DBusError) -> [DBusValue] {
        try await perform(
            destination: destination, path: path, interface: interface, member: member, arguments: arguments,
            timeout: timeout, abandonedOnCancel: true)
    }

    /// Calls a method as `call` does, but sees it through whatever becomes of the calling task:
    /// the call is sent, and its reply waited for, even when the task is cancelled. For what a
    /// task still has to say on its way out once it is cancelled (a BLE strap's
    /// `Device1.Disconnect` when hrmd stops), which `call` would not send. Nothing but
    /// `timeout`, which therefore has no default, ends the wait before the reply (or the
    /// connection closing): keep it short.
    public func callDespiteCancellation(
        destination: String, path: String, interface: String, member: String, arguments: [DBusValue] = [],
        timeout: Duration
    ) async throws(DBusError) -> [DBusValue] {
        try await perform(
            destination: destination, path: path, interface: interface, member: member, arguments: arguments,
            timeout: timeout, abandonedOnCancel: false)
    }

    /// Sends a method call on the loop thread and waits for its reply, its timeout, or (when
    /// `abandonedOnCancel`) the task's cancellation.
    private func perform(
        destination: String, path: String, interface: String, member: String, arguments: [DBusValue],
        timeout: Duration, abandonedOnCancel: Bool
    ) async throws(DBusError) -> [DBusValue] {
        let loop = loop
        let id = loop.makeIdentifier()
        let microseconds = UInt64(max(1, timeout.components.seconds * 1_000_000 + timeout.components.attoseconds / 1_000_000_000_000))
        let abandonment = CallAbandonment()
        @Sendable func start(_ continuation: BusEventLoop.CallContinuation) {
            let queued = loop.enqueue { loop in
                // Given up on before it was sent (the loop's cancelCall came first and found nothing).
                if abandonment.isRequested { return continuation.resume(returning: .failure(.abandoned)) }
                loop.startCall(
                    id: id, destination: destination, path: path, interface: interface, member: member,
                    arguments: arguments, timeoutMicroseconds: microseconds, continuation: continuation)
            }
            if !queued { continuation.resume(returning: .failure(.disconnected)) }
        }
        guard abandonedOnCancel else {
            return try await withCheckedContinuation(start).get()
        }
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation(start)
        } onCancel: {
            // The flag first: a cancelCall job that runs before the call started finds nothing,
            // and the call's own job, after it, sees the flag.
            abandonment.request()
            loop.enqueue { $0.cancelCall(id: id) }
        }
        return try result.get()
    }

    /// Reads one property through `org.freedesktop.DBus.Properties.Get`.
    public func property(destination: String, path: String, interface: String, name: String) async throws(DBusError) -> DBusValue {
        let reply = try await call(
            destination: destination, path: path, interface: "org.freedesktop.DBus.Properties", member: "Get",
            arguments: [.string(interface), .string(name)])
        guard let value = reply.first else { throw .unexpectedReply("Properties.Get returned nothing") }
        return value.unwrapped
    }

    /// Subscribes to the signals `rule` matches. The match is installed at the bus daemon when
    /// this returns, so a call made afterwards cannot race the signals it causes. When the rule
    /// names a sender, only signals that sender really sent are delivered: the bus daemon's
    /// own for `org.freedesktop.DBus`, the current owner's for a well-known name (followed
    /// through the bus daemon's NameOwnerChanged), that connection's for a unique name. Any
    /// client can send a signal to this connection directly, whatever its match rules say. The match is
    /// removed when the stream is dropped or its consumer stops.
    ///
    /// `take`, when given, sees each signal first, on the connection's loop thread as the signal
    /// arrives, and handles the ones it returns true for: those skip the stream (and the task
    /// hand-off it costs). It must be quick and must not block.
    public func signals(
        matching rule: DBusMatchRule, taking take: (@Sendable (DBusSignal) -> Bool)? = nil
    ) async throws(DBusError) -> AsyncStream<DBusSignal> {
        let loop = loop
        let id = loop.makeIdentifier()
        let (stream, continuation) = AsyncStream<DBusSignal>.makeStream()
        continuation.onTermination = { _ in loop.enqueue { $0.removeMatch(id: id) } }
        let installed = await withCheckedContinuation { (installed: CheckedContinuation<Result<Void, DBusError>, Never>) in
            let queued = loop.enqueue { loop in
                loop.addMatch(id: id, rule: rule, stream: continuation, take: take, installed: installed)
            }
            if !queued {
                continuation.finish()
                installed.resume(returning: .failure(.disconnected))
            }
        }
        try installed.get()
        return stream
    }

    /// Sends a signal from this connection. With a `destination` (a unique name such as a
    /// caller's `DBusMethodCall.sender`) only that connection receives it; without one, every
    /// connection whose match rules select it does.
    public func emitSignal(
        path: String, interface: String, member: String, arguments: [DBusValue] = [], destination: String? = nil
    ) async throws(DBusError) {
        try await onLoop { loop in
            loop.emit(path: path, interface: interface, member: member, arguments: arguments, destination: destination)
        }
    }

    /// Asks the bus daemon for a well-known name, without queueing for it and without letting
    /// another connection take it over (RequestName flags: DO_NOT_QUEUE only). Throws
    /// `DBusError.nameTaken` when another connection owns it, and the bus daemon's
    /// `org.freedesktop.DBus.Error.AccessDenied` when its policy forbids this connection to own it.
    public func requestName(_ name: String) async throws(DBusError) {
        let reply = try await call(
            destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
            member: "RequestName", arguments: [.string(name), .uint32(4)])  // DBUS_NAME_FLAG_DO_NOT_QUEUE
        switch reply.first?.integer {
        case 1, 4: return  // PRIMARY_OWNER, ALREADY_OWNER
        case 2, 3: throw .nameTaken(name)  // IN_QUEUE (cannot happen without queueing), EXISTS
        default: throw .unexpectedReply("RequestName(\(name)) answered \(reply)")
        }
    }

    /// The unique name of this connection (`:1.42`), as the bus daemon assigned it.
    public var uniqueName: String {
        get async throws(DBusError) {
            try await onLoop { $0.uniqueName() }
        }
    }

    /// Exports `interface` at `path`. Incoming calls arrive on the returned stream, in order;
    /// answer each one (`DBusMethodCall.reply`/`fail`).
    ///
    /// The loop thread never waits for the consumer, and bounds every caller (`limits`): when
    /// `limits.pendingCalls` calls are queued and not yet taken, or the caller's uid has
    /// `limits.callsPerUser` calls unanswered, or the call's arguments are over
    /// `limits.arguments`, the call is answered `org.freedesktop.DBus.Error.LimitsExceeded`
    /// right away; a reply over `limits.replyBytes` becomes LimitsExceeded too, and error
    /// messages are cut to `DBusCallLimits.errorMessageBytes`. Calls of the wrong signature
    /// are answered `InvalidArgs`, unknown methods `UnknownMethod`, by sd-bus from the vtable,
    /// which also answers `org.freedesktop.DBus.Introspectable.Introspect` and
    /// `org.freedesktop.DBus.Properties.Get`/`GetAll` (the properties are constant).
    /// Every method may be called by any user; authorize with `DBusMethodCall.senderUID`.
    /// The object is removed when the stream's consumer stops or the stream is dropped;
    /// calls still waiting in it are then answered `org.freedesktop.DBus.Error.Failed`.
    public func exportObject(
        path: String, interface: DBusInterfaceDescription, limits: DBusCallLimits
    ) async throws(DBusError) -> AsyncStream<DBusMethodCall> {
        guard limits.pendingCalls >= 1, limits.callsPerUser >= 1 else {
            throw .system(operation: "exportObject(\(path)): pendingCalls and callsPerUser must be at least 1", errno: 22)
        }
        try interface.validate()
        let id = loop.makeIdentifier()
        let (stream, continuation) = AsyncStream<DBusMethodCall>.makeStream(bufferingPolicy: .bufferingOldest(limits.pendingCalls))
        continuation.onTermination = { [loop] _ in loop.enqueue { $0.removeExport(id: id) } }
        do {
            try await onLoop { loop in loop.export(id: id, path: path, interface: interface, calls: continuation, limits: limits) }
        } catch {
            continuation.finish()
            throw error
        }
        return stream
    }

    /// Exports `interface` at `path` with only a bound on the calls queued: no bound per user
    /// or on arguments (for services whose callers are trusted), replies up to 16 MiB.
    public func exportObject(
        path: String, interface: DBusInterfaceDescription, maximumPendingCalls: Int
    ) async throws(DBusError) -> AsyncStream<DBusMethodCall> {
        try await exportObject(
            path: path, interface: interface,
            limits: DBusCallLimits(
                pendingCalls: maximumPendingCalls, callsPerUser: .max, arguments: .unlimited, replyBytes: 16 << 20))
    }

    /// Runs `job` on the loop thread and returns its result (`disconnected` once closed).
    func onLoop<T: Sendable>(_ job: @escaping @Sendable (BusEventLoop) -> Result<T, DBusError>) async throws(DBusError) -> T {
        let loop = loop
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<T, DBusError>, Never>) in
            let queued = loop.enqueue { loop in continuation.resume(returning: job(loop)) }
            if !queued { continuation.resume(returning: .failure(.disconnected)) }
        }
        return try result.get()
    }
}
