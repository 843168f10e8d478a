import SDBus
import Foundation
import TestSupport
import Testing

private let objectPath = "/org/example/Test"
private let interfaceName = "org.example.Test1"
// A bound for a call that never returns, not a speed: a loaded machine answers in seconds.
private let callTimeout = HangBound.duration

private let testInterface = DBusInterfaceDescription(
    name: interfaceName,
    methods: [
        .init(
            name: "Echo",
            inputs: [("text", "s"), ("count", "u"), ("options", "a{sv}"), ("data", "ay"), ("pair", "(xd)")],
            outputs: [("text", "s"), ("count", "u"), ("options", "a{sv}"), ("data", "ay"), ("pair", "(xd)")]),
        .init(name: "WriteTo", inputs: [("sink", "h"), ("text", "s")]),
        .init(name: "Whoami", outputs: [("uid", "u"), ("sender", "s"), ("interactive", "b")]),
        .init(name: "Later", inputs: [("milliseconds", "u")], outputs: [("done", "b")]),
        .init(name: "Refuse", inputs: [("reason", "s")]),
        .init(name: "Ignore"),
        .init(name: "WrongReply", outputs: [("number", "u")]),
        .init(name: "Hold", inputs: [("sink", "h")], outputs: [("held", "b")]),
    ],
    signals: [.init(name: "Changed", arguments: [("what", "s")])],
    properties: [
        .init(name: "Version", value: .string("1.2")),
        .init(name: "Limits", value: .properties([("max", .uint32(5)), ("unit", .string("count/min"))])),
        .init(name: "Anything", signature: "v", value: .int32(-3)),
    ])

/// A private bus, a service connection that exports `testInterface`, and its calls.
private struct Service {
    let bus: PrivateBus
    let server: DBusConnection
    let uniqueName: String
    let calls: AsyncStream<DBusMethodCall>

    init(maximumPendingCalls: Int = 16, allowingAllUsers: Bool = false) async throws {
        bus = try await PrivateBus(allowingAllUsers: allowingAllUsers)
        server = try DBusConnection.connect(address: bus.address)
        uniqueName = try await server.uniqueName
        calls = try await server.exportObject(path: objectPath, interface: testInterface, maximumPendingCalls: maximumPendingCalls)
    }

    func client() throws -> DBusConnection { try DBusConnection.connect(address: bus.address) }

    /// Runs `body` with a new service that answers its calls and one client of it, and closes
    /// all of them afterwards.
    static func serving(_ body: (Service, DBusConnection) async throws -> Void) async throws {
        let service = try await Service()
        defer { service.server.close() }
        let server = service.serve()
        defer { server.cancel() }
        let client = try service.client()
        defer { client.close() }
        try await body(service, client)
    }

    /// Answers the test methods until the stream ends.
    func serve() -> Task<Void, Never> {
        let calls = calls
        return Task {
            for await call in calls { Self.answer(call) }
        }
    }

    static func answer(_ call: DBusMethodCall) {
        switch call.member {
        case "Echo":
            call.reply(call.arguments)
        case "WriteTo":
            guard let sink = call.arguments.first?.fileDescriptor, let text = call.arguments.last?.string else {
                return call.fail(name: "org.example.Error.BadSink", message: "no descriptor")
            }
            let bytes = Array(text.utf8)
            guard write(sink.rawValue, bytes, bytes.count) == bytes.count else {
                return call.fail(name: "org.example.Error.BadSink", message: "write failed")
            }
            call.reply([])
        case "Whoami":
            call.reply([.uint32(call.senderUID), .string(call.sender), .bool(call.allowsInteractiveAuthorization)])
        case "Later":
            let delay = Int(call.arguments.first?.integer ?? 0)
            Task {
                try? await Task.sleep(for: .milliseconds(delay))
                call.reply([.bool(true)])
            }
        case "Refuse":
            call.fail(name: "org.example.Error.Refused", message: call.arguments.first?.string ?? "")
        case "Ignore":
            break  // dropped without an answer
        case "WrongReply":
            call.reply([.string("not a number")])
        default:
            call.fail(name: "org.example.Error.Unexpected", message: call.member)
        }
    }

    func call(
        _ client: DBusConnection, _ member: String, _ arguments: [DBusValue] = [], interface: String = interfaceName
    ) async throws(DBusError) -> [DBusValue] {
        try await client.call(
            destination: uniqueName, path: objectPath, interface: interface, member: member, arguments: arguments, timeout: callTimeout)
    }
}

/// The D-Bus error a call threw, or nil when it succeeded or threw something else.
private func remoteError(_ body: () async throws(DBusError) -> [DBusValue]) async -> (name: String, message: String)? {
    do {
        _ = try await body()
        return nil
    } catch {
        if case .remote(let name, let message) = error { return (name, message) }
        return nil
    }
}

@Suite("Exported objects against a private dbus-daemon", .timeLimit(.minutes(HangBound.suiteMinutes)))
struct ExportedObjectTests {
    @Test func aCallRoundTripsSeveralTypesAndAFileDescriptor() async throws {
        try await Service.serving { service, client async throws in
            let arguments: [DBusValue] = [
                .string("héllo"), .uint32(4_000_000_000),
                .properties([("Transport", .string("le")), ("UUIDs", .strings(["180d"])), ("RSSI", .int16(-60))]),
                .bytes([0x16, 0x48, 0x00]), .structure([.int64(-1 << 40), .double(72.5)]),
            ]
            #expect(try await service.call(client, "Echo", arguments) == arguments)

            let pipe = try makePipe()
            #expect(try await service.call(client, "WriteTo", [.unixFD(pipe.write), .string("through the pipe")]) == [])
            var buffer = [UInt8](repeating: 0, count: 64)
            let count = read(pipe.read.rawValue, &buffer, buffer.count)
            #expect(String(decoding: buffer.prefix(max(count, 0)), as: UTF8.self) == "through the pipe")

            let whoami = try await service.call(client, "Whoami")
            let clientName = try await client.uniqueName
            #expect(whoami.first == .uint32(geteuid()))
            #expect(whoami[1].string == clientName)
            #expect(whoami[2] == .bool(false))
        }
    }

    @Test func answersComeLaterFromAnotherTaskAndErrorsCarryNameAndMessage() async throws {
        try await Service.serving { service, client async throws in
            let started = ContinuousClock.now
            #expect(try await service.call(client, "Later", [.uint32(300)]) == [.bool(true)])
            #expect(ContinuousClock.now - started >= .milliseconds(300))

            let refused = await remoteError { () throws(DBusError) in try await service.call(client, "Refuse", [.string("not today")]) }
            #expect(refused?.name == "org.example.Error.Refused")
            #expect(refused?.message == "not today")

            let ignored = await remoteError { () throws(DBusError) in try await service.call(client, "Ignore") }
            #expect(ignored?.name == "org.freedesktop.DBus.Error.Failed")
            #expect(ignored?.message == "the service did not answer")

            let wrong = await remoteError { () throws(DBusError) in try await service.call(client, "WrongReply") }
            #expect(wrong?.name == "org.freedesktop.DBus.Error.Failed")

            // Still serving after all that.
            #expect(try await service.call(client, "Later", [.uint32(0)]) == [.bool(true)])
        }
    }

    @Test func theVtableAnswersWrongSignaturesAndUnknownMethods() async throws {
        try await Service.serving { service, client async throws in
            let wrongSignature = await remoteError { () throws(DBusError) in try await service.call(client, "Echo", [.string("only this")]) }
            #expect(wrongSignature?.name == "org.freedesktop.DBus.Error.InvalidArgs")
            let unknown = await remoteError { () throws(DBusError) in try await service.call(client, "Missing") }
            #expect(unknown?.name == "org.freedesktop.DBus.Error.UnknownMethod")
        }
    }

    @Test func introspectionAndConstantProperties() async throws {
        let service = try await Service()
        defer { service.server.close() }
        let client = try service.client()
        defer { client.close() }

        let xml = try #require(try await service.call(client, "Introspect", interface: "org.freedesktop.DBus.Introspectable").first?.string)
        #expect(xml.contains("<interface name=\"org.example.Test1\">"))
        #expect(xml.contains("<method name=\"Echo\">"))
        #expect(xml.contains("<arg type=\"a{sv}\" name=\"options\" direction=\"in\"/>"))
        #expect(xml.contains("<arg type=\"(xd)\" name=\"pair\" direction=\"out\"/>"))
        #expect(xml.contains("<arg type=\"u\" name=\"uid\" direction=\"out\"/>"))
        #expect(xml.contains("<signal name=\"Changed\">"))
        #expect(xml.contains("<arg type=\"s\" name=\"what\"/>"))
        #expect(xml.contains("<property name=\"Version\" type=\"s\" access=\"read\">"))
        #expect(xml.contains("org.freedesktop.DBus.Property.EmitsChangedSignal\" value=\"const\""))

        let version = try await client.property(destination: service.uniqueName, path: objectPath, interface: interfaceName, name: "Version")
        #expect(version == .string("1.2"))
        let anything = try await client.property(destination: service.uniqueName, path: objectPath, interface: interfaceName, name: "Anything")
        #expect(anything == .int32(-3))

        let all = try await service.call(client, "GetAll", [.string(interfaceName)], interface: "org.freedesktop.DBus.Properties")
        let properties = try #require(all.first?.stringKeyed)
        #expect(properties.keys.sorted() == ["Anything", "Limits", "Version"])
        #expect(properties["Limits"]?.unwrapped.stringKeyed?["max"]?.integer == 5)
        #expect(properties["Limits"]?.unwrapped.stringKeyed?["unit"]?.string == "count/min")
    }

    @Test(.enabled(if: geteuid() == 0, "running a client as uid 65534 (setpriv) needs root"))
    func senderUIDIsTheOtherUsersUID() async throws {
        let service = try await Service(allowingAllUsers: true)
        defer { service.server.close() }
        let server = service.serve()
        defer { server.cancel() }
        let output = try TemporaryDirectory(prefix: "hrmd-busctl")
        let result = try await ChildProcess.run(
            "/usr/bin/setpriv",
            [
                "--reuid=65534", "--regid=65534", "--clear-groups", "/usr/bin/busctl", "--address=\(service.bus.address)",
                "call", service.uniqueName, objectPath, interfaceName, "Whoami",
            ],
            in: output, timeout: HangBound.duration)
        #expect(result.exitCode == 0, "busctl: \(result.stderr)")
        // busctl prints the reply as `usb 65534 ":1.3" false`.
        #expect(result.stdout.hasPrefix("usb 65534 "), "busctl printed: \(result.stdout)")
    }

    @Test func aUnicastSignalReachesOnlyItsDestination() async throws {
        let service = try await Service()
        defer { service.server.close() }
        let rule = DBusMatchRule(interface: interfaceName, member: "Changed")
        let target = try service.client()
        defer { target.close() }
        let bystander = try service.client()
        defer { bystander.close() }
        let targetSignals = try await target.signals(matching: rule)
        let bystanderSignals = try await bystander.signals(matching: rule)

        try await service.server.emitSignal(
            path: objectPath, interface: interfaceName, member: "Changed", arguments: [.string("for you")],
            destination: try await target.uniqueName)
        try await service.server.emitSignal(path: objectPath, interface: interfaceName, member: "Changed", arguments: [.string("for all")])

        let delivered = try #require(await first(targetSignals))
        #expect(delivered.arguments == [.string("for you")])
        #expect(delivered.sender == service.uniqueName)
        // The bystander's rule matches both; signals from one sender arrive in order, so the
        // first it sees being the broadcast proves the unicast one never reached it.
        let seen = try #require(await first(bystanderSignals))
        #expect(seen.arguments == [.string("for all")])
    }

    @Test func callsBeyondTheLimitAreRefusedAndTheServiceGoesOn() async throws {
        let service = try await Service(maximumPendingCalls: 2)
        defer { service.server.close() }
        let client = try service.client()
        defer { client.close() }

        // Nobody takes calls yet: two wait in the stream, the third is refused at once.
        let outcomes = await withTaskGroup(of: String.self) { group in
            for _ in 0..<3 {
                group.addTask {
                    do {
                        _ = try await service.call(client, "Later", [.uint32(0)])
                        return "answered"
                    } catch {
                        return (error as? DBusError)?.name ?? "\(error)"
                    }
                }
            }
            var outcomes: [String] = []
            if let refused = await group.next() { outcomes.append(refused) }
            let server = service.serve()  // now take the two waiting calls
            for await outcome in group { outcomes.append(outcome) }
            // And the service goes on answering.
            let after = try? await service.call(client, "Later", [.uint32(0)])
            outcomes.append(after == [.bool(true)] ? "answered" : "not answered")
            server.cancel()
            return outcomes
        }
        #expect(outcomes == ["org.freedesktop.DBus.Error.LimitsExceeded", "answered", "answered", "answered"])
    }

    @Test func answeringAfterTheCallerLeftNeitherCrashesNorLeaks() async throws {
        let service = try await Service()
        defer { service.server.close() }
        var calls = service.calls.makeAsyncIterator()
        let leaving = try service.client()
        let leavingName = try await leaving.uniqueName
        let readEnd: DBusFileDescriptor
        let abandoned: Task<[DBusValue], any Error>
        do {
            let pipe = try makePipe()
            readEnd = pipe.read
            let writeEnd = pipe.write
            abandoned = Task { try await service.call(leaving, "Hold", [.unixFD(writeEnd)]) }
        }
        do {
            let call = try #require(await calls.next())
            #expect(call.member == "Hold")
            leaving.close()
            _ = await abandoned.result
            // Once the bus daemon has noticed that the caller is gone, its name has no owner.
            let observer = try service.client()
            defer { observer.close() }
            try await eventually("the bus daemon dropped the caller's name") {
                do {
                    _ = try await observer.call(
                        destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                        member: "GetNameOwner", arguments: [.string(leavingName)])
                    return false
                } catch {
                    return "\(error)".contains("NameHasNoOwner")
                }
            }
            call.reply([.bool(true)])
        }
        // Every copy of the write end is closed once the call and its message are released:
        // the client's, the decoded argument's and the one inside the server's sd-bus message.
        try await eventually("every copy of the write end closed (a descriptor of the call is still open)") { endOfFile(readEnd) }

        // The service still serves others.
        let server = service.serve()
        defer { server.cancel() }
        let other = try service.client()
        defer { other.close() }
        #expect(try await service.call(other, "Later", [.uint32(0)]) == [.bool(true)])
    }

    @Test func answeringAfterTheServiceClosedDoesNothing() async throws {
        let service = try await Service()
        var calls = service.calls.makeAsyncIterator()
        let client = try service.client()
        defer { client.close() }
        let waiting = Task { try await service.call(client, "Later", [.uint32(0)]) }
        let call = try #require(await calls.next())
        service.server.close()
        #expect(await calls.next() == nil, "the stream finishes when the connection closes")
        call.reply([.bool(true)])
        call.fail(name: "org.example.Error.Late", message: "ignored")
        #expect(call.isAnswered)
        let result = await waiting.result
        #expect(throws: DBusError.self) { try result.get() }
    }

    @Test func droppingTheStreamRemovesTheObject() async throws {
        let bus = try await PrivateBus()
        let server = try DBusConnection.connect(address: bus.address)
        defer { server.close() }
        let name = try await server.uniqueName
        var calls: AsyncStream<DBusMethodCall>? = try await server.exportObject(
            path: objectPath, interface: testInterface, maximumPendingCalls: 4)
        let client = try DBusConnection.connect(address: bus.address)
        defer { client.close() }
        _ = calls
        calls = nil
        var error: (name: String, message: String)?
        try await eventually("the object gone", checkingEvery: .milliseconds(20)) {
            error = await remoteError { () throws(DBusError) in
                try await client.call(destination: name, path: objectPath, interface: "org.freedesktop.DBus.Introspectable", member: "Introspect")
                    .filter { $0.string?.contains(interfaceName) == true }
            }
            return error != nil
        }
        #expect(error?.name == "org.freedesktop.DBus.Error.UnknownObject")
    }

    @Test func aNameOwnedByAnotherConnectionIsATypedError() async throws {
        let bus = try await PrivateBus()
        let first = try DBusConnection.connect(address: bus.address)
        defer { first.close() }
        let second = try DBusConnection.connect(address: bus.address)
        defer { second.close() }
        try await first.requestName("org.example.Service")
        try await first.requestName("org.example.Service")  // already the owner: fine
        await #expect(throws: DBusError.nameTaken("org.example.Service")) {
            try await second.requestName("org.example.Service")
        }
    }

    @Test func aBadDescriptionIsRefusedWithItsReason() async throws {
        let bus = try await PrivateBus()
        let server = try DBusConnection.connect(address: bus.address)
        defer { server.close() }
        let mistyped = DBusInterfaceDescription(name: interfaceName, properties: [.init(name: "P", signature: "u", value: .string("x"))])
        await #expect(throws: DBusError.self) {
            _ = try await server.exportObject(path: objectPath, interface: mistyped, maximumPendingCalls: 1)
        }
        let twice = try await server.exportObject(path: objectPath, interface: testInterface, maximumPendingCalls: 1)
        do {
            _ = try await server.exportObject(path: objectPath, interface: testInterface, maximumPendingCalls: 1)
            Issue.record("the same interface was exported twice at one path")
        } catch {
            #expect(error == .system(operation: "sd_bus_add_object_vtable(\(objectPath), \(interfaceName))", errno: EEXIST))
        }
        _ = twice
    }
}

/// Whether reading `descriptor` is at end of file now (every write end closed). Does not block:
/// a wait on it polls from a task, so it holds no thread of the cooperative pool.
private func endOfFile(_ descriptor: DBusFileDescriptor) -> Bool {
    var entry = pollfd(fd: descriptor.rawValue, events: Int16(POLLIN), revents: 0)
    guard poll(&entry, 1, 0) > 0 else { return false }
    var byte: UInt8 = 0
    return read(descriptor.rawValue, &byte, 1) == 0
}
