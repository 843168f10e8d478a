@testable import SDBus
import Synchronization
import TestSupport
import Testing

private let path = "/org/example/Limits"
private let interface = DBusInterfaceDescription(
    name: "org.example.Limits1",
    methods: [
        .init(name: "Take", inputs: [("values", "av")]),
        .init(name: "Give", inputs: [("bytes", "u")], outputs: [("data", "ay")]),
        .init(name: "Refuse", inputs: [("reason", "s")]),
        .init(name: "Park"),
    ],
    signals: [.init(name: "Changed", arguments: [("what", "s")])],
    properties: [.init(name: "Version", value: .string("1"))])

private let limits = DBusCallLimits(
    pendingCalls: 64, callsPerUser: 2, arguments: DBusDecodeBudget(values: 1000, stringBytes: 4096),
    argumentBytesPerUser: 1 << 20, argumentBytesInAll: 2 << 20, descriptorsPerUser: 4, descriptorsInAll: 8,
    replyBytes: 64 * 1024)

/// Calls kept unanswered.
private final class ParkedCalls: Sendable {
    let calls = Mutex<[DBusMethodCall]>([])
}

/// A service exporting `interface` under `limits`: Take answers nothing, Give answers `bytes`
/// bytes, Refuse fails with its argument, Park keeps the call unanswered until `release()`.
private final class LimitedService: Sendable {
    let bus: PrivateBus
    let server: DBusConnection
    let name: String
    private let parked = ParkedCalls()
    private let serving: Task<Void, Never>

    init() async throws {
        bus = try await PrivateBus()
        server = try DBusConnection.connect(address: bus.address)
        name = try await server.uniqueName
        let calls = try await server.exportObject(path: path, interface: interface, limits: limits)
        let parked = parked
        serving = Task {
            for await call in calls {
                switch call.member {
                case "Give":
                    call.reply([.bytes([UInt8](repeating: 7, count: Int(call.arguments.first?.integer ?? 0)))])
                case "Refuse": call.fail(name: "org.example.Error.Refused", message: call.arguments.first?.string ?? "")
                case "Park": parked.calls.withLock { $0.append(call) }
                default: call.reply([])
                }
            }
        }
    }

    deinit {
        serving.cancel()
        server.close()
    }

    var parkedCount: Int { parked.calls.withLock { $0.count } }

    func release() { parked.calls.withLock { calls in calls.forEach { $0.reply([]) }; calls.removeAll() } }

    func call(_ client: DBusConnection, _ member: String, _ arguments: [DBusValue] = []) async throws(DBusError) -> [DBusValue] {
        try await client.call(
            destination: name, path: path, interface: interface.name, member: member, arguments: arguments,
            timeout: HangBound.duration)
    }
}

private func errorName(_ body: () async throws(DBusError) -> [DBusValue]) async -> (name: String, message: String)? {
    do {
        _ = try await body()
        return nil
    } catch {
        if case .remote(let name, let message) = error { return (name, message) }
        return ("not remote", "\(error)")
    }
}

@Suite("What a caller may send and be sent", .timeLimit(.minutes(HangBound.suiteMinutes)))
struct CallLimitsTests {
    @Test("arguments over the decode budget are LimitsExceeded, and the next call is served")
    func argumentBudget() async throws {
        let service = try await LimitedService()
        let client = try DBusConnection.connect(address: service.bus.address)
        defer { client.close() }
        let many = DBusValue.array(element: "v", (0..<2000).map { .variant(.int32($0)) })
        let refused = await errorName { () throws(DBusError) in try await service.call(client, "Take", [many]) }
        #expect(refused?.name == "org.freedesktop.DBus.Error.LimitsExceeded")
        #expect(refused?.message.contains("more than 1000 values") == true, "\(String(describing: refused))")
        let long = DBusValue.array(element: "v", [.variant(.string(String(repeating: "x", count: 5000)))])
        let refusedString = await errorName { () throws(DBusError) in try await service.call(client, "Take", [long]) }
        #expect(refusedString?.message.contains("string bytes") == true, "\(String(describing: refusedString))")
        #expect(await errorName { () throws(DBusError) in try await service.call(client, "Take", [.array(element: "v", [.variant(.int32(1))])]) } == nil)
    }

    @Test("a reply over the byte budget becomes LimitsExceeded; one within it is sent")
    func replyBudget() async throws {
        let service = try await LimitedService()
        let client = try DBusConnection.connect(address: service.bus.address)
        defer { client.close() }
        let refused = await errorName { () throws(DBusError) in try await service.call(client, "Give", [.uint32(100_000)]) }
        #expect(refused?.name == "org.freedesktop.DBus.Error.LimitsExceeded")
        #expect(refused?.message.contains("over the 65536 bytes one reply may carry") == true, "\(String(describing: refused))")
        let reply = try await service.call(client, "Give", [.uint32(60_000)])
        #expect(reply.first?.bytes?.count == 60_000)
        // The body of an `ay` reply is its length (4 bytes) and the bytes: 65 532 bytes fill the
        // 65 536 exactly, one more is over.
        #expect(try await service.call(client, "Give", [.uint32(65_532)]).first?.bytes?.count == 65_532)
        let over = await errorName { () throws(DBusError) in try await service.call(client, "Give", [.uint32(65_533)]) }
        #expect(over?.name == "org.freedesktop.DBus.Error.LimitsExceeded", "\(String(describing: over))")
    }

    @Test("an error message is cut to 1 KiB on a character boundary")
    func errorMessageCut() async throws {
        let service = try await LimitedService()
        let client = try DBusConnection.connect(address: service.bus.address)
        defer { client.close() }
        let refused = await errorName { () throws(DBusError) in try await service.call(client, "Refuse", [.string(String(repeating: "é", count: 1500))]) }
        #expect(refused?.name == "org.example.Error.Refused")
        #expect((refused?.message.utf8.count ?? .max) <= DBusCallLimits.errorMessageBytes)
        #expect(refused?.message.hasSuffix("é…") == true)
    }

    @Test("a uid's unanswered calls are bounded; answering them lets the next ones in")
    func callsPerUser() async throws {
        let service = try await LimitedService()
        let client = try DBusConnection.connect(address: service.bus.address)
        defer { client.close() }
        let first = Task { try await service.call(client, "Park") }
        let second = Task { try await service.call(client, "Park") }
        try await eventually("both calls are parked") { service.parkedCount == 2 }
        let third = await errorName { () throws(DBusError) in try await service.call(client, "Give", [.uint32(1)]) }
        #expect(third?.name == "org.freedesktop.DBus.Error.LimitsExceeded")
        #expect(third?.message.contains("calls to org.example.Limits1 waiting for answers") == true, "\(String(describing: third))")
        service.release()
        _ = try await first.value
        _ = try await second.value
        #expect(try await service.call(client, "Give", [.uint32(1)]).first?.bytes == [7])
    }

    @Test("Properties.Get naming an interface longer than D-Bus allows is refused in a short message")
    func overlongPropertyName() async throws {
        let service = try await LimitedService()
        let client = try DBusConnection.connect(address: service.bus.address)
        defer { client.close() }
        let refused = await errorName { () throws(DBusError) in
            try await client.call(
                destination: service.name, path: path, interface: "org.freedesktop.DBus.Properties", member: "Get",
                arguments: [.string(String(repeating: "i", count: 100_000)), .string("Version")], timeout: HangBound.duration)
        }
        #expect(refused?.name == "org.freedesktop.DBus.Error.InvalidArgs")
        #expect((refused?.message.utf8.count ?? .max) < 200)
        let version = try await client.property(destination: service.name, path: path, interface: interface.name, name: "Version")
        #expect(version == .string("1"))
    }

    @Test("a signal is delivered only from the sender its rule names: the bus daemon, or a name's owner")
    func forgedSignals() async throws {
        let bus = try await PrivateBus()
        let subscriber = try DBusConnection.connect(address: bus.address)
        let owner = try DBusConnection.connect(address: bus.address)
        let forger = try DBusConnection.connect(address: bus.address)
        defer { [subscriber, owner, forger].forEach { $0.close() } }
        try await owner.requestName("org.example.Owner")
        let subscriberName = try await subscriber.uniqueName
        let ownerName = try await owner.uniqueName

        let departures = try await subscriber.signals(matching: DBusMatchRule(
            sender: "org.freedesktop.DBus", interface: "org.freedesktop.DBus", member: "NameOwnerChanged", arg0: "org.example.Gone"))
        let changes = try await subscriber.signals(matching: DBusMatchRule(sender: "org.example.Owner", interface: "org.example.Limits1", member: "Changed"))
        var departing = departures.makeAsyncIterator()
        var changing = changes.makeAsyncIterator()

        for _ in 0..<3 {
            try await forger.emitSignal(
                path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus", member: "NameOwnerChanged",
                arguments: [.string("org.example.Gone"), .string(":1.999"), .string("")], destination: subscriberName)
            try await forger.emitSignal(
                path: path, interface: "org.example.Limits1", member: "Changed", arguments: [.string("forged")], destination: subscriberName)
        }
        // The bus daemon answers the forger only after it queued the forged signals to the
        // subscriber: everything genuine below reaches the subscriber after them.
        _ = try await forger.call(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus", member: "GetId")

        try await owner.emitSignal(path: path, interface: "org.example.Limits1", member: "Changed", arguments: [.string("genuine")])
        let gone = try DBusConnection.connect(address: bus.address)
        try await gone.requestName("org.example.Gone")
        gone.close()

        let change = await changing.next()
        #expect(change?.arguments.first?.string == "genuine")
        #expect(change?.sender == ownerName)
        // NameOwnerChanged for the name: the one for its taking comes first, from the bus daemon.
        let departure = await departing.next()
        #expect(departure?.sender == "org.freedesktop.DBus")
        #expect(departure?.arguments.dropFirst().first?.string == "")  // no old owner: the name was taken
    }
}
