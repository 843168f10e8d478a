import CSystemd

/// A client connection to a D-Bus bus over sd-bus. Safe to use from any task: every
/// operation is handed to the connection's own event-loop thread. Closed on `close()` or
/// when the last reference goes; when the bus goes away, pending calls fail with
/// `DBusError.disconnected` and every signal stream finishes.
public final class DBusConnection: Sendable {
    private let loop: BusEventLoop

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
    /// with the error's name; cancelling the task abandons the call.
    public func call(
        destination: String, path: String, interface: String, member: String, arguments: [DBusValue] = [],
        timeout: Duration = DBusConnection.defaultTimeout
    ) async throws(DBusError) -> [DBusValue] {
        let loop = loop
        let id = loop.makeIdentifier()
        let microseconds = UInt64(max(1, timeout.components.seconds * 1_000_000 + timeout.components.attoseconds / 1_000_000_000_000))
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: BusEventLoop.CallContinuation) in
                let queued = loop.enqueue { loop in
                    loop.startCall(
                        id: id, destination: destination, path: path, interface: interface, member: member,
                        arguments: arguments, timeoutMicroseconds: microseconds, continuation: continuation)
                }
                if !queued { continuation.resume(returning: .failure(.disconnected)) }
            }
        } onCancel: {
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
    /// this returns, so a call made afterwards cannot race the signals it causes. The match is
    /// removed when the stream is dropped or its consumer stops.
    public func signals(matching rule: DBusMatchRule) async throws(DBusError) -> AsyncStream<DBusSignal> {
        let loop = loop
        let id = loop.makeIdentifier()
        let (stream, continuation) = AsyncStream<DBusSignal>.makeStream()
        continuation.onTermination = { _ in loop.enqueue { $0.removeMatch(id: id) } }
        let text = rule.description
        let installed = await withCheckedContinuation { (installed: CheckedContinuation<Result<Void, DBusError>, Never>) in
            let queued = loop.enqueue { loop in
                loop.addMatch(id: id, rule: text, stream: continuation, installed: installed)
            }
            if !queued {
                continuation.finish()
                installed.resume(returning: .failure(.disconnected))
            }
        }
        try installed.get()
        return stream
    }

    /// Sends a signal from this connection.
    public func emitSignal(path: String, interface: String, member: String, arguments: [DBusValue] = []) async throws(DBusError) {
        let loop = loop
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<Void, DBusError>, Never>) in
            let queued = loop.enqueue { loop in
                continuation.resume(returning: loop.emit(path: path, interface: interface, member: member, arguments: arguments))
            }
            if !queued { continuation.resume(returning: .failure(.disconnected)) }
        }
        try result.get()
    }

    /// Asks the bus daemon for a well-known name; throws when another connection has it.
    public func requestName(_ name: String) async throws(DBusError) {
        let reply = try await call(
            destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
            member: "RequestName", arguments: [.string(name), .uint32(4)])  // DBUS_NAME_FLAG_DO_NOT_QUEUE
        guard reply.first?.integer == 1 || reply.first?.integer == 4 else {
            throw .remote(name: "org.freedesktop.DBus.Error.AccessDenied", message: "\(name) is owned by another connection")
        }
    }
}
