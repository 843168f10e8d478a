import BluetoothWire
@preconcurrency import Glibc
@testable import HCIBackend
import Logging
import SensorBackend
import SensorFrames
import Synchronization
import TestSupport
import Testing

/// A controller that takes every command (or refuses those it is told to), keeps them, and
/// sends the events a test gives it.
final class ScriptedController: ControllerChannel {
    let events: AsyncStream<HCIEvent>
    private let continuation: AsyncStream<HCIEvent>.Continuation
    private let state = Mutex(State())

    private struct State {
        var commands: [HCICommand] = []
        var refusals: [UInt16: HCICommandFailure] = [:]
        var failure: BluetoothSocketError?
    }

    init() {
        (events, continuation) = AsyncStream.makeStream(of: HCIEvent.self)
    }

    func execute(_ command: HCICommand) async throws(HCICommandFailure) -> [UInt8] {
        let refusal = state.withLock { state in
            state.commands.append(command)
            return state.refusals[command.opcode]
        }
        if let refusal { throw refusal }
        return []
    }

    func post(_ command: HCICommand) { state.withLock { $0.commands.append(command) } }
    func close() { continuation.finish() }
    var failure: BluetoothSocketError? { state.withLock { $0.failure } }

    /// Every command so far, posted ones included, in order.
    var commands: [HCICommand] { state.withLock { $0.commands } }

    func send(_ event: HCIEvent) { continuation.yield(event) }

    /// Sends `reports` at once and again every 250 ms until `condition` holds, as a strap
    /// advertises over and over. The backend takes a sighting only while it is fresh (5 s), so a
    /// single report read late on a busy machine would be dropped for good; on the air, as here,
    /// the next one follows.
    func advertise(_ reports: [AdvertisingReport], until what: String, _ condition: () async throws -> Bool) async throws {
        try await eventually(what, checkingEvery: .milliseconds(250)) {
            if try await condition() { return true }
            send(.leAdvertisingReports(reports))
            return false
        }
    }

    /// From now on, `opcode` fails with `failure`.
    func refuse(_ opcode: UInt16, with failure: HCICommandFailure) { state.withLock { $0.refusals[opcode] = failure } }

    /// The adapter went away under the socket.
    func hangUp(_ error: BluetoothSocketError) {
        state.withLock { $0.failure = error }
        continuation.finish()
    }
}

/// Adapters and straps as a test scripts them: each `open` takes the next planned outcome (the
/// last one repeats); each connect takes the next planned result (by default a bearer).
final class ScriptedAccess: HCIAccess {
    static let adapter = AdapterInfo(index: 0, address: BluetoothAddress("00:1A:7D:DA:71:13")!, isUp: true)

    enum Opening {
        case problem(HCIProblem)
        case controller(ScriptedController)
    }

    private let state: Mutex<State>

    private struct State {
        var openings: [Opening]
        var opened = 0
        var connectFailures: [BluetoothSocketError] = []
        var connects: [Sighting] = []
        var peers: [Int32] = []
    }

    init(_ openings: Opening...) {
        state = Mutex(State(openings: openings))
    }

    func open(_ choice: AdapterChoice, logger: Logger) async throws(HCIProblem) -> OpenAdapter {
        let opening = state.withLock { state in
            defer { state.opened += 1 }
            return state.openings[min(state.opened, state.openings.count - 1)]
        }
        switch opening {
        case .problem(let problem): throw problem
        case .controller(let controller): return OpenAdapter(info: Self.adapter, controller: controller)
        }
    }

    func connect(from adapter: AdapterInfo, to sighting: Sighting, timeout: Duration) async throws(BluetoothSocketError) -> ATTBearer {
        let (failure, peer) = state.withLock { state in
            state.connects.append(sighting)
            if !state.connectFailures.isEmpty { return (Optional(state.connectFailures.removeFirst()), Int32(-1)) }
            return (nil, state.peers.isEmpty ? -1 : state.peers.removeFirst())
        }
        if let failure { throw failure }
        return ATTBearer(descriptor: peer, handle: 0x40)
    }

    /// The next connects fail with these.
    func failConnects(_ failures: BluetoothSocketError...) { state.withLock { $0.connectFailures += failures } }

    /// The next connects reach these descriptors (a scripted GATT server's client end), in
    /// order; after them, a bearer without a descriptor (for scripted links).
    func connect(to descriptors: Int32...) { state.withLock { $0.peers += descriptors } }

    var opened: Int { state.withLock { $0.opened } }
    var connects: [Sighting] { state.withLock { $0.connects } }
}

/// A strap's GATT session as the link runner plays it: `connected`, streaming, one
/// notification, then the link lasts until `drop()` (or cancellation).
final class ScriptedLinks: Sendable {
    private let drops: AsyncStream<Void>
    private let dropper: AsyncStream<Void>.Continuation

    init() {
        (drops, dropper) = AsyncStream.makeStream(of: Void.self)
    }

    /// Ends the current link as if the strap went away.
    func drop() { dropper.yield() }

    var runner: LinkRunner {
        { [drops] bearer, device, sink, onStreaming in
            sink.send(SensorFrame(time: .now(), transport: .ble, device: device, kind: .connected))
            onStreaming()
            sink.send(SensorFrame(time: .now(), transport: .ble, device: device, kind: .notify, characteristic: .heartRateMeasurement, value: [0, 72]))
            for await _ in drops {
                sink.send(SensorFrame(time: .now(), transport: .ble, device: device, kind: .disconnected))
                return .ended(reason: "the strap disconnected", streamed: true)
            }
            return .cancelled
        }
    }
}

/// What the backend delivered.
final class Delivered: Sendable {
    private let frames = Mutex<[SensorFrame]>([])
    private let statuses = Mutex<[SensorStatus]>([])

    var sink: FrameSink {
        FrameSink({ frame in self.frames.withLock { $0.append(frame) } }, status: { status in self.statuses.withLock { $0.append(status) } })
    }

    func states(of device: String) -> [SensorState] { statuses.withLock { $0 }.filter { $0.device.rawValue == device }.map(\.state) }
    func kinds(of device: String) -> [FrameKind] { frames(of: device).map(\.kind) }
    func frames(of device: String) -> [SensorFrame] { frames.withLock { $0 }.filter { $0.device.rawValue == device } }
    var transports: Set<SensorTransport> { Set(statuses.withLock { $0 }.map(\.transport) + frames.withLock { $0 }.map(\.transport)) }
}

/// Runs an hci backend on scripted parts while `body` runs, then cancels it and checks that it
/// returned (within the hang bound).
func withBackend(
    access: ScriptedAccess, links: ScriptedLinks = ScriptedLinks(), link: LinkRunner? = nil, settings: HCISensors.Settings,
    delivered: Delivered, _ body: @Sendable () async throws -> Void
) async throws {
    var settings = settings
    settings.backoff = Backoff(initial: .milliseconds(50), maximum: .milliseconds(200), jitter: 0)
    let backend = HCISensors(
        settings: settings, logger: Logger(label: "test"), jitter: SystemJitter(), access: access, link: link ?? links.runner)
    let sink = delivered.sink
    try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask { try await backend.run(into: sink) }
        defer { group.cancelAll() }
        try await body()
        group.cancelAll()
        let stopped = ContinuousClock.now
        try await group.waitForAll()
        // A bound for a backend that ignores cancellation, not a speed: a loaded machine may take seconds.
        #expect(ContinuousClock.now - stopped < HangBound.duration, "the backend stops when cancelled")
    }
}
