import BluetoothWire
import Glibc
import HCIBackend
import Synchronization
import TestSupport
import Testing

/// The ATT client against a scripted GATT server over a socketpair. Every wait ends: the client's
/// transaction timeout is a few seconds (200 ms where silence is tested), and the server hangs up
/// by itself after 30 s, far beyond what a test takes even on a busy machine.
@Suite struct ATTClientTests {
    let table = GATTTable(GATTTable.strapServices())

    private func connect(
        mtu: UInt16? = 247, cues: [ScriptedGATTServer.Cue] = [], timeout: Duration = .seconds(5), maximumPDU: Int = 517
    ) throws -> (ScriptedGATTServer, ATTClient) {
        let server = try ScriptedGATTServer(table: table, mtu: mtu, cues: cues, lifetime: .seconds(30))
        let client = try ATTClient(descriptor: server.clientDescriptor, transactionTimeout: timeout, maximumPDU: maximumPDU)
        return (server, client)
    }

    private var location: UInt16 { table.valueHandle(of: .bodySensorLocation) ?? 0 }

    @Test func exchangesTheMTUAndReads() async throws {
        let (_, client) = try connect(mtu: 100)
        defer { client.close() }
        #expect(client.mtu == 23)
        #expect(try await client.request(.exchangeMTURequest(mtu: 247)) == .exchangeMTUResponse(mtu: 100))
        #expect(client.mtu == 100)
        #expect(try await client.request(.readRequest(handle: location)) == .readResponse(value: [0x01]))
    }

    @Test func anErrorResponseIsThrownAndTheBearerStaysUp() async throws {
        let (_, client) = try connect()
        defer { client.close() }
        await #expect(throws: ATTClientError.errorResponse(request: 0x0A, handle: 0x0999, error: .invalidHandle)) {
            try await client.request(.readRequest(handle: 0x0999))
        }
        #expect(try await client.request(.readRequest(handle: location)) == .readResponse(value: [0x01]))
    }

    @Test func concurrentRequestsTakeTurns() async throws {
        let overlapped = Mutex(false)
        let slowFirstAnswer = ScriptedGATTServer.Cue(ATTPDU.Opcode.readRequest, handle: location, [
            .perform { server in
                usleep(100_000)
                overlapped.withLock { $0 = server.hasInputWaiting }
            },
            .answer,
        ])
        let (server, client) = try connect(cues: [slowFirstAnswer])
        defer { client.close() }
        let battery = try #require(table.valueHandle(of: .batteryLevel))
        let location = location
        let answers = await within {
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
        try await eventually { server.received.contains(.handleValueConfirmation) }
    }

    @Test func aSilentPeerTimesOutAndTheBearerEnds() async throws {
        let (_, client) = try connect(cues: [ScriptedGATTServer.Cue(ATTPDU.Opcode.readRequest, [])], timeout: .milliseconds(200))
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
        let (_, client) = try connect(cues: [hangUp], timeout: .seconds(10))
        await #expect(throws: ATTClientError.closed) { try await client.request(.readRequest(handle: location)) }
        #expect(client.endReason == .closed)
        var values: [[UInt8]] = []
        for await notification in client.notifications { values.append(notification.value) }
        #expect(values == [[0, 60]], "what came before the close is still delivered")
    }

    @Test func closeEndsAnOutstandingRequestAndCanBeRepeated() async throws {
        let (server, client) = try connect(cues: [ScriptedGATTServer.Cue(ATTPDU.Opcode.readRequest, [])], timeout: .seconds(10))
        let location = location
        async let failure = failure { () async throws(ATTClientError) in try await client.request(.readRequest(handle: location)) }
        try await eventually { !server.received.isEmpty }
        client.close()
        client.close()
        #expect(await failure == .closed)
        for await _ in client.notifications { Issue.record("no notification after close") }
        await #expect(throws: ATTClientError.closed) { try await client.request(.readRequest(handle: location)) }
    }

    @Test func aPDUAboveTheMTUIsRefusedNotReadPastItsBound() async throws {
        let oversizedResponse = ATTPDU.readResponse(value: [UInt8](repeating: 0x41, count: 40)).encoded
        let (server, client) = try connect(cues: [ScriptedGATTServer.Cue(ATTPDU.Opcode.readRequest, [.send(oversizedResponse)])], maximumPDU: 64)
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
        let (_, client) = try connect(cues: [ScriptedGATTServer.Cue(ATTPDU.Opcode.readRequest, [.send(ATTPDU.writeResponse.encoded)])])
        defer { client.close() }
        await #expect(throws: ATTClientError.unexpected(.writeResponse)) { try await client.request(.readRequest(handle: location)) }
        #expect(try await client.request(.readRequest(handle: location)) == .readResponse(value: [0x01]))
    }

    @Test func aMalformedResponseFailsTheRequest() async throws {
        let (_, client) = try connect(cues: [ScriptedGATTServer.Cue(ATTPDU.Opcode.readRequest, [.send([0x01, 0x0A])])])
        defer { client.close() }
        await #expect(throws: ATTClientError.malformed(.truncated(what: "ATT PDU 0x1", needed: 3, got: 1))) {
            try await client.request(.readRequest(handle: location))
        }
    }

    @Test func aResponseWithNoRequestIsDiscarded() async throws {
        let (server, client) = try connect()
        defer { client.close() }
        server.send(.readResponse(value: [1, 2, 3]))
        try await eventually { client.discardedPDUs == 1 }
        #expect(try await client.request(.readRequest(handle: location)) == .readResponse(value: [0x01]))
    }

    @Test func thePeersRequestsGetRequestNotSupported() async throws {
        let (server, client) = try connect()
        defer { client.close() }
        server.send(.readByGroupTypeRequest(start: 1, end: 0xFFFF, type: .primaryService))
        try await eventually {
            server.received.contains(.errorResponse(request: ATTPDU.Opcode.readByGroupTypeRequest, handle: 0, error: .requestNotSupported))
        }
    }

    @Test func thePeersMTUExchangeIsAnswered() async throws {
        let (server, client) = try connect(maximumPDU: 300)
        defer { client.close() }
        server.send(.exchangeMTURequest(mtu: 100))
        try await eventually { server.received.contains(.exchangeMTUResponse(mtu: 300)) }
        #expect(client.mtu == 100)
    }

    @Test func onlyRequestsCanBeSent() async throws {
        let (server, client) = try connect()
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

/// Waits until `condition` holds, at most `limit`; records an issue when it never does.
func eventually(
    _ what: String = "the condition", limit: Duration = .seconds(30), sourceLocation: SourceLocation = #_sourceLocation,
    _ condition: () -> Bool
) async throws {
    let deadline = ContinuousClock.now.advanced(by: limit)
    while ContinuousClock.now < deadline {
        if condition() { return }
        try await Task.sleep(for: .milliseconds(10))
    }
    Issue.record("\(what) did not hold within \(limit)", sourceLocation: sourceLocation)
}

/// The value of `body`, or nil (and an issue) when it takes longer than `limit`: a client that
/// loses a waiting request fails the test instead of hanging it. Cancelling the caller cancels `body`.
func within<T: Sendable>(_ limit: Duration = .seconds(40), _ body: @escaping @Sendable () async -> T) async -> T? {
    let race = Race<T>()
    let result = await withTaskCancellationHandler {
        await withCheckedContinuation { continuation in race.start(continuation, limit: limit, body) }
    } onCancel: {
        race.cancel()
    }
    if result == nil { Issue.record("not done within \(limit)") }
    return result
}

/// `body` against a timer: the continuation gets whichever ends first.
private final class Race<T: Sendable>: Sendable {
    private struct State {
        var continuation: CheckedContinuation<T?, Never>?
        var work: Task<Void, Never>?
        var cancelled = false
    }
    private let state = Mutex(State())

    func start(_ continuation: CheckedContinuation<T?, Never>, limit: Duration, _ body: @escaping @Sendable () async -> T) {
        state.withLock { $0.continuation = continuation }
        let timer = Task {
            try? await Task.sleep(for: limit)
            self.finish(nil)
        }
        let work = Task {
            self.finish(await body())
            timer.cancel()
        }
        let cancelled = state.withLock { state in
            state.work = work
            return state.cancelled
        }
        if cancelled { work.cancel() }
    }

    func cancel() {
        let work = state.withLock { state in
            state.cancelled = true
            return state.work
        }
        work?.cancel()
    }

    private func finish(_ value: T?) {
        state.withLock { $0.continuation.take() }?.resume(returning: value)
    }
}
