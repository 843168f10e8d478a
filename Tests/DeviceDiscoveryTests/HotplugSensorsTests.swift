import DeviceDiscovery
import Glibc
import Logging
import SensorBackend
import SensorFrames
import Synchronization
import Testing

/// Device events the test sends by hand.
final class ScriptedEvents: HotplugEventSource {
    private let stream: AsyncStream<HotplugEvent>
    private let continuation: AsyncStream<HotplugEvent>.Continuation

    init() {
        (stream, continuation) = AsyncStream<HotplugEvent>.makeStream()
    }

    func events() throws -> AsyncStream<HotplugEvent> { stream }
    func send(_ event: HotplugEvent) { continuation.yield(event) }
}

/// The statuses the backend reported, in order.
final class StatusLog: Sendable {
    private let entries = Mutex<[SensorStatus]>([])
    func append(_ status: SensorStatus) { entries.withLock { $0.append(status) } }
    var all: [SensorStatus] { entries.withLock { $0 } }
}

/// What the fake child backends did, in order.
final class ChildLog: Sendable {
    private let entries = Mutex<[String]>([])
    func append(_ entry: String) { entries.withLock { $0.append(entry) } }
    var all: [String] { entries.withLock { $0 } }
}

/// A child backend that runs until cancelled and notes its start and stop.
struct RecordingChild: SensorBackend {
    let device: HotplugDevice
    let log: ChildLog
    var name: String { "child:\(device.devnode)" }

    func run(into sink: FrameSink) async throws {
        log.append("start \(device.devnode)")
        sink.report(SensorStatus(transport: .ant, device: SensorID("strap-on-\(device.devnode)"), state: .streaming))
        defer { log.append("stop \(device.devnode)") }
        while !Task.isCancelled {
            try? await Task.sleep(for: .milliseconds(10))
        }
    }
}

/// A child backend that gives up at once, as one that can never work does.
struct FailingChild: SensorBackend {
    struct CannotWork: Error {}
    let device: HotplugDevice
    let log: ChildLog
    var name: String { "failing:\(device.devnode)" }

    func run(into sink: FrameSink) async throws {
        log.append("failed \(device.devnode)")
        throw CannotWork()
    }
}

/// A source that cannot watch devices at all.
struct BrokenSource: HotplugEventSource {
    func events() throws -> AsyncStream<HotplugEvent> { throw UdevError("udev_monitor_new_from_netlink", errno: EACCES) }
}

/// Runs `HotplugSensors` over scripted events for one test; everything bounded.
struct HotplugFixture {
    let events = ScriptedEvents()
    let children = ChildLog()
    let statuses = StatusLog()

    func backend(kind: HotplugSensorKind = .ant, excluding excluded: Set<String> = []) -> HotplugSensors {
        HotplugSensors(kind: kind, excluding: excluded, source: events, logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })) { [children] device in
            RecordingChild(device: device, log: children)
        }
    }

    var sink: FrameSink {
        FrameSink({ _ in }, status: { [statuses] status in statuses.append(status) })
    }

    /// The bound on a wait here: TestSupport's `HangBound.duration` (120 s), which this target
    /// does not link. A hang bound, not a speed: in a full run on two cores the pool can be busy
    /// for many seconds.
    static let hangBound: Duration = .seconds(120)

    /// Waits for `condition`, at most ``hangBound``; records an issue when it never holds.
    func eventually(_ what: Comment, _ condition: () -> Bool) async {
        let deadline = ContinuousClock.now.advanced(by: Self.hangBound)
        while !condition() {
            guard ContinuousClock.now < deadline else {
                Issue.record("timed out waiting: \(what)")
                return
            }
            try? await Task.sleep(for: .milliseconds(5))
        }
    }

    /// Gives the backend a moment to (wrongly) react: for negative checks only, where no event
    /// can show that nothing happened (on a busy machine such a check may pass without testing much).
    func settle() async { try? await Task.sleep(for: .milliseconds(100)) }
}

func device(_ name: String, kind: HotplugSensorKind = .ant) -> HotplugDevice {
    HotplugDevice(devnode: "/dev/\(name)", syspath: "/sys/class/tty/\(name)", kind: kind)
}

@Suite(.timeLimit(.minutes(5))) struct HotplugSensorsTests {
    @Test func servesEachPresentDeviceAndStopsThemAllWhenCancelled() async throws {
        let fixture = HotplugFixture()
        let run = Task { [fixture] in try await fixture.backend().run(into: fixture.sink) }
        fixture.events.send(.added(device("ttyUSB0")))
        fixture.events.send(.added(device("ttyUSB1")))
        fixture.events.send(.initialScanFinished)
        await fixture.eventually("both sticks served") { fixture.children.all.count == 2 }
        #expect(Set(fixture.children.all) == ["start /dev/ttyUSB0", "start /dev/ttyUSB1"])
        run.cancel()
        try await run.value
        #expect(Set(fixture.children.all.suffix(2)) == ["stop /dev/ttyUSB0", "stop /dev/ttyUSB1"])
        #expect(fixture.statuses.all.allSatisfy { $0.state == .streaming }, "stopping hrmd is no unplug")
    }

    @Test func aDeviceAlreadyServedIsNotStartedTwice() async throws {
        let fixture = HotplugFixture()
        let run = Task { [fixture] in try await fixture.backend().run(into: fixture.sink) }
        fixture.events.send(.added(device("ttyUSB0")))
        fixture.events.send(.initialScanFinished)
        fixture.events.send(.added(device("ttyUSB0")))  // the monitor saw it during the scan
        await fixture.eventually("the stick served") { !fixture.children.all.isEmpty }
        await fixture.settle()
        #expect(fixture.children.all == ["start /dev/ttyUSB0"])
        run.cancel()
        try await run.value
    }

    @Test func unpluggingStopsTheChildAndReplugStartsANewOne() async throws {
        let fixture = HotplugFixture()
        let run = Task { [fixture] in try await fixture.backend().run(into: fixture.sink) }
        fixture.events.send(.initialScanFinished)
        fixture.events.send(.added(device("ttyUSB0")))
        await fixture.eventually("served") { fixture.children.all == ["start /dev/ttyUSB0"] }
        fixture.events.send(.removed(syspath: "/sys/class/tty/ttyUSB0"))
        await fixture.eventually("released") { fixture.children.all.last == "stop /dev/ttyUSB0" }
        await fixture.eventually("its strap reported unplugged") {
            fixture.statuses.all.contains {
                $0.device == "strap-on-/dev/ttyUSB0" && $0.state == .stopped(reason: "/dev/ttyUSB0 was unplugged")
            }
        }
        fixture.events.send(.added(device("ttyUSB0")))
        await fixture.eventually("served again") { fixture.children.all.count == 3 }
        #expect(fixture.children.all == ["start /dev/ttyUSB0", "stop /dev/ttyUSB0", "start /dev/ttyUSB0"])
        run.cancel()
        try await run.value
    }

    @Test func waitsWithAReasonWhileNothingIsPluggedIn() async throws {
        let fixture = HotplugFixture()
        let run = Task { [fixture] in try await fixture.backend().run(into: fixture.sink) }
        fixture.events.send(.initialScanFinished)
        await fixture.eventually("a waiting status") { !fixture.statuses.all.isEmpty }
        let first = try #require(fixture.statuses.all.first)
        #expect(first.state == .waiting(reason: "no ANT stick plugged in"))
        #expect(first.transport == .ant)
        #expect(first.device == "ant")
        fixture.events.send(.added(device("ttyUSB0")))
        fixture.events.send(.removed(syspath: "/sys/class/tty/ttyUSB0"))
        await fixture.eventually("waiting again after the unplug") { fixture.statuses.all.filter { $0.device == "ant" }.count == 2 }
        run.cancel()
        try await run.value
    }

    @Test func onlyDevicesOfItsKindAreServed() async throws {
        let fixture = HotplugFixture()
        let run = Task { [fixture] in try await fixture.backend(kind: .serial).run(into: fixture.sink) }
        fixture.events.send(.added(device("ttyUSB0", kind: .ant)))
        fixture.events.send(.added(device("ttyACM0", kind: .serial)))
        fixture.events.send(.initialScanFinished)
        await fixture.eventually("the serial sensor served") { !fixture.children.all.isEmpty }
        await fixture.settle()
        #expect(fixture.children.all == ["start /dev/ttyACM0"])
        #expect(fixture.statuses.all.map(\.device) == ["strap-on-/dev/ttyACM0"])
        run.cancel()
        try await run.value
    }

    @Test func removingAnUnservedDeviceChangesNothing() async throws {
        let fixture = HotplugFixture()
        let run = Task { [fixture] in try await fixture.backend().run(into: fixture.sink) }
        fixture.events.send(.added(device("ttyUSB0")))
        fixture.events.send(.initialScanFinished)
        fixture.events.send(.removed(syspath: "/sys/class/tty/ttyS0"))
        await fixture.eventually("served") { !fixture.children.all.isEmpty }
        await fixture.settle()
        #expect(fixture.children.all == ["start /dev/ttyUSB0"])
        run.cancel()
        try await run.value
    }

    @Test func aDeviceConfiguredByPathIsLeftToItsOwnBackend() async throws {
        let fixture = HotplugFixture()
        let run = Task { [fixture] in try await fixture.backend(excluding: ["/dev/ttyUSB0"]).run(into: fixture.sink) }
        fixture.events.send(.added(device("ttyUSB0")))
        fixture.events.send(.added(device("ttyUSB1")))
        fixture.events.send(.initialScanFinished)
        await fixture.eventually("the other stick served") { !fixture.children.all.isEmpty }
        await fixture.settle()
        #expect(fixture.children.all == ["start /dev/ttyUSB1"])
        run.cancel()
        try await run.value
    }

    @Test func aChildThatEndsByItselfFreesItsDeviceForTheNextPlug() async throws {
        let fixture = HotplugFixture()
        let backend = HotplugSensors(kind: .ant, source: fixture.events, logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })) {
            [children = fixture.children] device in FailingChild(device: device, log: children)
        }
        let run = Task { [fixture] in try await backend.run(into: fixture.sink) }
        fixture.events.send(.initialScanFinished)
        fixture.events.send(.added(device("ttyUSB0")))
        await fixture.eventually("the child failed") { fixture.children.all.count == 1 }
        await fixture.eventually("waiting again once nothing is served") { fixture.statuses.all.count == 2 }
        fixture.events.send(.added(device("ttyUSB0")))
        await fixture.eventually("tried again on the next plug") { fixture.children.all.count == 2 }
        run.cancel()
        try await run.value
    }

    @Test func aSourceThatCannotWatchDevicesIsAnError() async {
        let backend = HotplugSensors(kind: .serial, source: BrokenSource(), logger: Logger(label: "test")) { device in
            RecordingChild(device: device, log: ChildLog())
        }
        await #expect(throws: UdevError("udev_monitor_new_from_netlink", errno: EACCES)) {
            try await backend.run(into: FrameSink({ _ in }))
        }
    }
}
