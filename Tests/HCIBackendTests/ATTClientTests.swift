import BluetoothWire
import Glibc
import HCIBackend
import Synchronization
import TestSupport
import Testing

/// The ATT client against a scripted GATT server over a socketpair. Every wait ends: the client's
/// transaction timeout is the hang bound (200 ms where silence is tested), and the server serves
/// while the test holds it.
@Suite(.timeLimit(.minutes(HangBound.suiteMinutes))) struct ATTClientTests {
    let table = GATTTable(GATTTable.strapServices())

    /// A server and a client on the two ends of a socketpair. The server stops when its handle
    /// goes, so each test holds it to its end (`withExtendedLifetime`).
    private func connect(
        mtu: UInt16? = 247, cues: [ScriptedGATTServer.Cue] = [], timeout: Duration = HangBound.duration, maximumPDU: Int = 517
    ) throws -> (ScriptedGATTServer, ATTClient) {
        let server = try ScriptedGATTServer(table: table, mtu: mtu, cues: cues)
        let client = try ATTClient(descriptor: server.clientDescriptor, transactionTimeout: timeout, maximumPDU: maximumPDU)
        return (server, client)
    }

    private var location: UInt16 { table.valueHandle(of: .bodySensorLocation) ?? 0 }

    @Test func exchangesTheMTUAndReads() async throws {
        let (server, client) = try connect(mtu: 100)
        defer { withExtendedLifetime(server) {} }
        defer { client.close() }
        #expect(client.mtu == 23)
        #expect(try await client.request(.exchangeMTURequest(mtu: 247)) == .exchangeMTUResponse(mtu: 100))
        #expect(client.mtu == 100)
        #expect(try await client.request(.readRequest(handle: location)) == .readResponse(value: [0x01]))
    }

    @Test func anErrorResponseIsThrownAndTheBearerStaysUp() async throws {
        let (server, client) = try connect()
        defer { withExtendedLifetime(server) {} }
        defer { client.close() }
        await #expect(throws: ATTClientError.errorResponse(request: 0x0A, handle: 0x0999, error: .invalidHandle)) {
            try await client.request(.readRequest(handle: 0x0999))
        }
        #expect(try await client.request(.readRequest(handle: location)) == .readResponse(value: [0x01]))
    }

    @Test func concurrentRequestsTakeTurns() async throws {
        let overlapped = Mutex(false)
        let theClient = Mutex<ATTClient?>(nil)
        let heldFirstAnswer = ScriptedGATTServer.Cue(ATTPDU.Opcode.readRequest, handle: location, [
            .perform { server in
                // The answer is held until the other request waits for its turn (or came first and
                // was answered), or arrives here without waiting.
                let deadline = ContinuousClock.now.advanced(by: HangBound.duration)
                while theClient.withLock({ $0?.requestsWaitingForTurn ?? 0 }) == 0 && server.received.count < 2
                    && !server.hasInputWaiting && ContinuousClock.now < deadline
                {
                    usleep(1_000)
                }
                overlapped.withLock { $0 = server.hasInputWaiting }
            },
            .answer,
        ])
        let (server, client) = try connect(cues: [heldFirstAnswer])
        theClient.withLock { $0 = client }
        defer { withExtendedLifetime(server) {} }
        defer { client.close() }
        let battery = try #require(table.valueHandle(of: .batteryLevel))
        let location = location
        let answers = try await withinHangBound("both answers") {
            async let first = try? client.request(.readRequest(handle: location))
            async let second = try? client.request(.readRequest(handle: battery))
            return await [first, second]
        }
        #expect(answers == [.readResponse(value: [0x01]), .readResponse(value: [87])])
        #expect(overlapped.withLock { $0 } == false, "the second request waited for the first answer")
        #expect(server.received.count == 2)
    }

    @Test func notificationsAndIndicationsComeInOrderAndIndicationsAreConfirmed() async throws {
        let (server, client) = try connect()
        defer { withExtendedLifetime(server) {} }
        defer { client.close() }
        server.send(.handleValueNotification(handle: 0x0010, value: [0x00, 72]))
        server.send(.handleValueIndication(handle: 0x0011, value: [0x00, 73]))
        server.send(.handleValueNotification(handle: 0x0010, value: [0x00, 74]))
        var received: [ATTNotification] = []
        for await notification in client.notifications {
            received.append(notification)
            if received.count == 3 { break }
        }
        #expect(received.map(\.value) == [[0x00, 72], [0x00, 73], [0x00, 74]])
        #expect(received.map(\.handle) == [0x0010, 0x0011, 0x0010])
        #expect(received.map(\.time) == received.map(\.time).sorted())
        try await eventually("the indication confirmed") { server.received.contains(.handleValueConfirmation) }
    }

    @Test func aSilentPeerTimesOutAndTheBearerEnds() async throws {
        let (server, client) = try connect(cues: [ScriptedGATTServer.Cue(ATTPDU.Opcode.readRequest, [])], timeout: .milliseconds(200))
        defer { withExtendedLifetime(server) {} }
        await #expect(throws: ATTClientError.timeout(request: 0x0A)) {
            try await client.request(.readRequest(handle: location))
        }
        #expect(client.endReason == .timeout(request: 0x0A))
        await #expect(throws: ATTClientError.closed) { try await client.request(.readRequest(handle: location)) }
        for await _ in client.notifications { Issue.record("no notification after the end") }
    }

    @Test func aPeerThatClosesFailsTheRequestAndEndsTheNotifications() async throws {
        let lastNotification = ATTPDU.handleValueNotification(handle: 0x10, value: [0, 60]).encoded
        let hangUp = ScriptedGATTServer.Cue(ATTPDU.Opcode.readRequest, [.send(lastNotification), .hangUp])
        let (server, client) = try connect(cues: [hangUp])
        defer { withExtendedLifetime(server) {} }
        await #expect(throws: ATTClientError.closed) { try await client.request(.readRequest(handle: location)) }
        #expect(client.endReason == .closed)
        var values: [[UInt8]] = []
        for await notification in client.notifications { values.append(notification.value) }
        #expect(values == [[0, 60]], "what came before the close is still delivered")
    }

    @Test func closeEndsAnOutstandingRequestAndCanBeRepeated() async throws {
        let (server, client) = try connect(cues: [ScriptedGATTServer.Cue(ATTPDU.Opcode.readRequest, [])])
        defer { withExtendedLifetime(server) {} }
        let location = location
        async let failure = failure { () async throws(ATTClientError) in try await client.request(.readRequest(handle: location)) }
        try await eventually("the request at the server") { !server.received.isEmpty }
        client.close()
        client.close()
        #expect(await failure == .closed)
        for await _ in client.notifications { Issue.record("no notification after close") }
        await #expect(throws: ATTClientError.closed) { try await client.request(.readRequest(handle: location)) }
    }

    @Test func aPDUAboveTheMTUIsRefusedNotReadPastItsBound() async throws {
        let oversizedResponse = ATTPDU.readResponse(value: [UInt8](repeating: 0x41, count: 40)).encoded
        let (server, client) = try connect(cues: [ScriptedGATTServer.Cue(ATTPDU.Opcode.readRequest, [.send(oversizedResponse)])], maximumPDU: 64)
        defer { withExtendedLifetime(server) {} }
        defer { client.close() }
        server.send(.handleValueNotification(handle: 0x10, value: [UInt8](repeating: 0, count: 30)))  // above 23
        server.send(.handleValueNotification(handle: 0x10, value: [UInt8](repeating: 0, count: 600)))  // above the buffer
        server.send(.handleValueNotification(handle: 0x10, value: [0, 61]))
        for await notification in client.notifications {
            #expect(notification.value == [0, 61])
            break
        }
        #expect(client.discardedPDUs == 2)
        await #expect {
            try await client.request(.readRequest(handle: location))
        } throws: { error in
            guard case ATTClientError.malformed(.malformed(_, let reason)) = error else { return false }
            return reason == "41 bytes, above the ATT_MTU of 23"
        }
        #expect(client.endReason == nil)
    }

    @Test func aResponseToAnotherRequestIsUnexpected() async throws {
        let (server, client) = try connect(cues: [ScriptedGATTServer.Cue(ATTPDU.Opcode.readRequest, [.send(ATTPDU.writeResponse.encoded)])])
        defer { withExtendedLifetime(server) {} }
        defer { client.close() }
        await #expect(throws: ATTClientError.unexpected(.writeResponse)) { try await client.request(.readRequest(handle: location)) }
        #expect(try await client.request(.readRequest(handle: location)) == .readResponse(value: [0x01]))
    }

    @Test func aMalformedResponseFailsTheRequest() async throws {
        let (server, client) = try connect(cues: [ScriptedGATTServer.Cue(ATTPDU.Opcode.readRequest, [.send([0x01, 0x0A])])])
        defer { withExtendedLifetime(server) {} }
        defer { client.close() }
        await #expect(throws: ATTClientError.malformed(.truncated(what: "ATT PDU 0x1", needed: 3, got: 1))) {
            try await client.request(.readRequest(handle: location))
        }
    }

    @Test func aResponseWithNoRequestIsDiscarded() async throws {
        let (server, client) = try connect()
        defer { withExtendedLifetime(server) {} }
        defer { client.close() }
        server.send(.readResponse(value: [1, 2, 3]))
        try await eventually("the response discarded") { client.discardedPDUs == 1 }
        #expect(try await client.request(.readRequest(handle: location)) == .readResponse(value: [0x01]))
    }

    @Test func thePeersRequestsGetRequestNotSupported() async throws {
        let (server, client) = try connect()
        defer { withExtendedLifetime(server) {} }
        defer { client.close() }
        server.send(.readByGroupTypeRequest(start: 1, end: 0xFFFF, type: .primaryService))
        try await eventually("the refusal of the peer's request") {
            server.received.contains(.errorResponse(request: ATTPDU.Opcode.readByGroupTypeRequest, handle: 0, error: .requestNotSupported))
        }
    }

    @Test func thePeersMTUExchangeIsAnswered() async throws {
        let (server, client) = try connect(maximumPDU: 300)
        defer { withExtendedLifetime(server) {} }
        defer { client.close() }
        server.send(.exchangeMTURequest(mtu: 100))
        try await eventually("the MTU answer") { server.received.contains(.exchangeMTUResponse(mtu: 300)) }
        #expect(client.mtu == 100)
    }

    @Test func onlyRequestsCanBeSent() async throws {
        let (server, client) = try connect()
        defer { withExtendedLifetime(server) {} }
        defer { client.close() }
        await #expect(throws: ATTClientError.self) { try await client.request(.writeCommand(handle: location, value: [1])) }
        let tooLong = [UInt8](repeating: 0, count: 30)
        await #expect(throws: ATTClientError.self) { try await client.request(.writeRequest(handle: location, value: tooLong)) }
        #expect(server.received.isEmpty)
    }
}

/// The error `body` throws; nil when it returns.
func failure<T>(_ body: () async throws(ATTClientError) -> T) async -> ATTClientError? {
    do {
        _ = try await body()
        return nil
    } catch {
        return error
    }
}
