import SDBus
import Foundation
import TestSupport
import Testing

/// Takes the first element of `stream` that satisfies `condition`; nil when the stream finishes
/// without one, or after the hang bound.
func first<T: Sendable>(
    _ stream: AsyncStream<T>, where condition: @escaping @Sendable (T) -> Bool = { _ in true }
) async -> T? {
    await withTaskGroup(of: T?.self) { group in
        group.addTask {
            for await element in stream where condition(element) { return element }
            return nil
        }
        group.addTask {
            try? await Task.sleep(for: HangBound.duration)
            return nil
        }
        let result = await group.next() ?? nil
        group.cancelAll()
        return result
    }
}

private let busName = "org.freedesktop.DBus"
private let busPath = "/org/freedesktop/DBus"

@Suite("DBusConnection against a private dbus-daemon", .timeLimit(.minutes(HangBound.suiteMinutes)))
struct DBusConnectionTests {
    @Test func listNamesIncludesTheBusAndOurselves() async throws {
        let bus = try await PrivateBus()
        let connection = try DBusConnection.connect(address: bus.address)
        defer { connection.close() }
        let reply = try await connection.call(destination: busName, path: busPath, interface: busName, member: "ListNames")
        let names = try #require(reply.first?.strings)
        #expect(names.contains(busName))
        #expect(names.contains { $0.hasPrefix(":") })
    }

    @Test func getNameOwnerOfAMissingNameIsATypedError() async throws {
        let bus = try await PrivateBus()
        let connection = try DBusConnection.connect(address: bus.address)
        defer { connection.close() }
        await #expect(throws: DBusError.self) {
            _ = try await connection.call(
                destination: busName, path: busPath, interface: busName, member: "GetNameOwner", arguments: [.string("org.bluez")])
        }
        do {
            _ = try await connection.call(
                destination: busName, path: busPath, interface: busName, member: "GetNameOwner", arguments: [.string("org.bluez")])
        } catch {
            #expect(error.name == "org.freedesktop.DBus.Error.NameHasNoOwner")
        }
    }

    @Test func systemBusHonoursTheEnvironmentAddress() async throws {
        let bus = try await PrivateBus()
        setenv("DBUS_SYSTEM_BUS_ADDRESS", bus.address, 1)
        let connection = try DBusConnection.system()
        defer { connection.close() }
        let reply = try await connection.call(destination: busName, path: busPath, interface: busName, member: "GetId")
        #expect(reply.first?.string?.count == 32)
    }

    @Test func nameOwnerChangedWhenASecondConnectionTakesAName() async throws {
        let bus = try await PrivateBus()
        let watcher = try DBusConnection.connect(address: bus.address)
        defer { watcher.close() }
        let changes = try await watcher.signals(matching: DBusMatchRule(
            sender: busName, interface: busName, member: "NameOwnerChanged", arg0: "org.example.Owner"))
        let owner = try DBusConnection.connect(address: bus.address)
        try await owner.requestName("org.example.Owner")
        let change = try #require(await first(changes))
        #expect(change.arguments.first?.string == "org.example.Owner")
        #expect(change.arguments[1].string == "")
        #expect(change.arguments[2].string?.hasPrefix(":") == true)

        let reply = try await watcher.call(
            destination: busName, path: busPath, interface: busName, member: "GetNameOwner", arguments: [.string("org.example.Owner")])
        #expect(reply.first?.string == change.arguments[2].string)

        owner.close()
        let lost = try #require(await first(changes))
        #expect(lost.arguments[2].string == "")
    }

    @Test func valuesRoundTripThroughASignal() async throws {
        let bus = try await PrivateBus()
        let connection = try DBusConnection.connect(address: bus.address)
        defer { connection.close() }
        let received = try await connection.signals(matching: DBusMatchRule(interface: "org.example.Echo", member: "Values"))
        let pipe = try makePipe()
        let values: [DBusValue] = [
            .byte(7), .bool(true), .int16(-2), .uint16(65535), .int32(-70000), .uint32(4_000_000_000),
            .int64(-1 << 40), .uint64(1 << 63), .double(72.5), .string("héllo"), .objectPath("/org/bluez/hci0"),
            .signature("a{sv}"), .bytes([0x16, 0x48, 0x00, 0x04]), .bytes([]), .strings(["a", "b"]),
            .properties([("Transport", .string("le")), ("UUIDs", .strings(["180d"])), ("RSSI", .int16(-60))]),
            .structure([.int32(1), .string("x")]), .variant(.variant(.uint32(3))), .unixFD(pipe.write),
        ]
        try await connection.emitSignal(path: "/org/example", interface: "org.example.Echo", member: "Values", arguments: values)
        let signal = try #require(await first(received))
        #expect(signal.path == "/org/example")
        #expect(signal.arguments.count == values.count)
        #expect(Array(signal.arguments.dropLast()) == Array(values.dropLast()))
        // The received descriptor is a duplicate that reaches the same pipe.
        let fd = try #require(signal.arguments.last?.fileDescriptor)
        #expect(fd.rawValue != pipe.write.rawValue)
        #expect(write(fd.rawValue, "x", 1) == 1)
        var byte: UInt8 = 0
        #expect(read(pipe.read.rawValue, &byte, 1) == 1 && byte == UInt8(ascii: "x"))
    }

    @Test func signalsTakenOnTheLoopThreadSkipTheStream() async throws {
        let bus = try await PrivateBus()
        let connection = try DBusConnection.connect(address: bus.address)
        defer { connection.close() }
        let (taken, takenContinuation) = AsyncStream<DBusSignal>.makeStream()
        let received = try await connection.signals(matching: DBusMatchRule(interface: "org.example.Echo")) { signal in
            guard signal.member == "Taken" else { return false }
            takenContinuation.yield(signal)
            return true
        }
        for member in ["Taken", "Left", "Taken", "Left"] {
            try await connection.emitSignal(path: "/org/example", interface: "org.example.Echo", member: member, arguments: [.string(member)])
        }
        try await connection.emitSignal(path: "/org/example", interface: "org.example.Echo", member: "End")
        var left: [String] = []
        while let signal = await first(received), signal.member != "End" { left.append(signal.member) }
        #expect(left == ["Left", "Left"])
        takenContinuation.finish()
        var takenMembers: [String] = []
        for await signal in taken { takenMembers.append(signal.member) }
        #expect(takenMembers == ["Taken", "Taken"])
    }

    @Test func streamsFinishAndCallsFailWhenTheBusDies() async throws {
        let bus = try await PrivateBus()
        let connection = try DBusConnection.connect(address: bus.address)
        let stream = try await connection.signals(matching: DBusMatchRule(member: "Nothing"))
        bus.stop()
        let ended = await withTaskGroup(of: Bool.self) { group in
            group.addTask { for await _ in stream {}; return true }
            group.addTask { try? await Task.sleep(for: HangBound.duration); return false }
            let first = await group.next() ?? false
            group.cancelAll()
            return first
        }
        #expect(ended)
        #expect(!connection.isOpen)
        await #expect(throws: DBusError.disconnected) {
            _ = try await connection.call(destination: busName, path: busPath, interface: busName, member: "GetId")
        }
    }

    @Test func aCancelledCallReturnsPromptly() async throws {
        let bus = try await PrivateBus()
        let connection = try DBusConnection.connect(address: bus.address)
        defer { connection.close() }
        let owner = try DBusConnection.connect(address: bus.address)
        defer { owner.close() }
        let silent = DBusInterfaceDescription(name: "org.example.Silent", methods: [.init(name: "Hang")])
        var calls = try await owner.exportObject(path: "/", interface: silent, maximumPendingCalls: 1).makeAsyncIterator()
        try await owner.requestName("org.example.Silent")  // takes the call but never answers it
        let task = Task {
            try await connection.call(
                destination: "org.example.Silent", path: "/", interface: "org.example.Silent", member: "Hang", timeout: HangBound.duration)
        }
        let call = try #require(await calls.next(), "the call reaches the silent owner")
        task.cancel()
        let result = await task.result
        // The cancellation ended the call, not an answer nor its timeout (the hang bound).
        #expect(throws: DBusError.remote(name: "org.freedesktop.DBus.Error.NoReply", message: "cancelled")) { try result.get() }
        withExtendedLifetime(call) {}
    }

    /// A connection and an owner of `org.example.Silent`, whose `Hang(s)` calls arrive on the
    /// stream `start` returns and are answered only when the test answers them.
    private struct SilentPeer: Sendable {
        static let name = "org.example.Silent"
        let bus: PrivateBus
        let connection: DBusConnection
        let owner: DBusConnection

        static func start() async throws -> (SilentPeer, calls: AsyncStream<DBusMethodCall>.AsyncIterator) {
            let bus = try await PrivateBus()
            let peer = SilentPeer(
                bus: bus, connection: try DBusConnection.connect(address: bus.address), owner: try DBusConnection.connect(address: bus.address))
            let silent = DBusInterfaceDescription(name: Self.name, methods: [.init(name: "Hang", inputs: [("tag", "s")])])
            let calls = try await peer.owner.exportObject(path: "/", interface: silent, maximumPendingCalls: 4).makeAsyncIterator()
            try await peer.owner.requestName(Self.name)
            return (peer, calls)
        }

        func hang(_ tag: String, timeout: Duration = HangBound.duration, despiteCancellation: Bool = false) async throws(DBusError) -> [DBusValue] {
            if despiteCancellation {
                return try await connection.callDespiteCancellation(
                    destination: Self.name, path: "/", interface: Self.name, member: "Hang", arguments: [.string(tag)], timeout: timeout)
            }
            return try await connection.call(
                destination: Self.name, path: "/", interface: Self.name, member: "Hang", arguments: [.string(tag)], timeout: timeout)
        }

        func close() {
            connection.close()
            owner.close()
        }
    }

    /// A task that is cancelled before it makes its call: it waits for its cancellation first.
    private func cancelledTask<T: Sendable>(_ body: @escaping @Sendable () async throws(DBusError) -> T) -> Task<T, any Error> {
        let task = Task { () async throws -> T in
            try? await Task.sleep(for: HangBound.duration)  // ends when the task is cancelled
            return try await body()
        }
        task.cancel()
        return task
    }

    @Test func aCallFromACancelledTaskIsNotSent() async throws {
        let (peer, incoming) = try await SilentPeer.start()
        var calls = incoming
        defer { peer.close() }
        let cancelled = cancelledTask { () async throws(DBusError) in try await peer.hang("from a cancelled task", timeout: .seconds(5)) }
        // The cancellation ended the call, not an answer nor its timeout (which says so otherwise).
        await #expect(throws: DBusError.remote(name: "org.freedesktop.DBus.Error.NoReply", message: "cancelled")) { try await cancelled.value }
        let live = Task { () async throws(DBusError) in try await peer.hang("live") }
        let first = try #require(await calls.next())
        #expect(first.arguments == [.string("live")], "the cancelled task's call was never sent")
        first.reply()
        _ = try await live.value
    }

    @Test func aCallDespiteCancellationIsSentAndAnsweredFromACancelledTask() async throws {
        let (peer, incoming) = try await SilentPeer.start()
        var calls = incoming
        defer { peer.close() }
        let cancelled = cancelledTask { () async throws(DBusError) in
            try await peer.hang("on the way out", despiteCancellation: true)
        }
        let call = try #require(await calls.next())
        #expect(call.arguments == [.string("on the way out")])
        call.reply()
        #expect(try await cancelled.value == [])
    }

    @Test func aCallDespiteCancellationEndsAtItsTimeout() async throws {
        let (peer, incoming) = try await SilentPeer.start()
        var calls = incoming
        defer { peer.close() }
        let cancelled = cancelledTask { () async throws(DBusError) in
            try await peer.hang("unanswered", timeout: .milliseconds(200), despiteCancellation: true)
        }
        let call = try #require(await calls.next(), "sent although its task is cancelled")
        let result = await cancelled.result
        #expect(throws: DBusError.self) { try result.get() }
        if case .failure(let error as DBusError) = result {
            #expect(error.isNoReply && error != DBusError.remote(name: "org.freedesktop.DBus.Error.NoReply", message: "cancelled"),
                    "sd-bus's timeout, not the cancellation: \(error)")
        }
        withExtendedLifetime(call) {}
    }

    @Test func aDroppedStreamRemovesItsMatch() async throws {
        let bus = try await PrivateBus()
        let connection = try DBusConnection.connect(address: bus.address)
        defer { connection.close() }
        let before = try await matchRules(connection)
        var stream: AsyncStream<DBusSignal>? = try await connection.signals(matching: DBusMatchRule(member: "Gone"))
        #expect(try await matchRules(connection) == before + 1)
        _ = stream
        stream = nil
        try await eventually("the match rule removed at the bus daemon", checkingEvery: .milliseconds(20)) {
            try await matchRules(connection) == before
        }
    }

    /// Every client's match rules, as the bus daemon counts them.
    private func matchRules(_ connection: DBusConnection) async throws -> Int64 {
        let reply = try await connection.call(
            destination: busName, path: busPath, interface: "org.freedesktop.DBus.Debug.Stats", member: "GetStats")
        return try #require(reply.first?.stringKeyed?["MatchRules"]?.integer)
    }
}

/// A new pipe, both ends owned.
func makePipe() throws -> (read: DBusFileDescriptor, write: DBusFileDescriptor) {
    var ends: [Int32] = [0, 0]
    guard pipe(&ends) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
    return (DBusFileDescriptor(owning: ends[0]), DBusFileDescriptor(owning: ends[1]))
}
