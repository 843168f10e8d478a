import DeviceDiscovery
import Glibc
import Logging
import SensorBackend
import SensorFrames
import Synchronization
import TestSupport
import Testing

/// Device events the test sends by hand; it knows when the backend has dealt with them all.
final class ScriptedEvents: HotplugEventSource {
    private let sent = HandledEvents<HotplugEvent>()

    func events() throws -> AsyncStream<HotplugEvent> { sent.stream }
    func send(_ event: HotplugEvent) { sent.send(event) }
    /// Whether the backend has taken every event sent so far and come back for more.
    var handledAll: Bool { sent.handledAll }
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
            try? await Task.sleep(for: HangBound.duration)  // ends when the task is cancelled
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
    let log = LogLines()

    func backend(kind: HotplugSensorKind = .ant, excluding excluded: Set<String> = []) -> HotplugSensors {
        HotplugSensors(kind: kind, excluding: excluded, source: events, logger: Logger(label: "test", factory: { [log] _ in log })) { [children] device in
            RecordingChild(device: device, log: children)
        }
    }

    var sink: FrameSink {
        FrameSink({ _ in }, status: { [statuses] status in statuses.append(status) })
    }

    /// Waits until the backend has dealt with every event sent so far: for negative checks,
    /// made once the backend came back for the next event. A child it started meanwhile has
    /// been logged ("… added") by then, if not yet started.
    func settle() async throws {
        try await eventually("the backend took every event sent") { events.handledAll }
        let added = log.lines.filter { $0.hasSuffix(" added") }.count
        try await eventually("a child started for each device the backend took") {
            children.all.filter { $0.hasPrefix("start ") }.count >= added
        }
    }
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
        try await eventually("both sticks served") { fixture.children.all.count == 2 }
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
        try await eventually("the stick served") { !fixture.children.all.isEmpty }
        try await fixture.settle()
        #expect(fixture.children.all == ["start /dev/ttyUSB0"])
        run.cancel()
        try await run.value
    }

    @Test func unpluggingStopsTheChildAndReplugStartsANewOne() async throws {
        let fixture = HotplugFixture()
        let run = Task { [fixture] in try await fixture.backend().run(into: fixture.sink) }
        fixture.events.send(.initialScanFinished)
        fixture.events.send(.added(device("ttyUSB0")))
        try await eventually("served") { fixture.children.all == ["start /dev/ttyUSB0"] }
        fixture.events.send(.removed(syspath: "/sys/class/tty/ttyUSB0"))
        try await eventually("released") { fixture.children.all.last == "stop /dev/ttyUSB0" }
        try await eventually("its strap reported unplugged") {
            fixture.statuses.all.contains {
                $0.device == "strap-on-/dev/ttyUSB0" && $0.state == .stopped(reason: "/dev/ttyUSB0 was unplugged")
            }
        }
        fixture.events.send(.added(device("ttyUSB0")))
        try await eventually("served again") { fixture.children.all.count == 3 }
        #expect(fixture.children.all == ["start /dev/ttyUSB0", "stop /dev/ttyUSB0", "start /dev/ttyUSB0"])
        run.cancel()
        try await run.value
    }

    @Test func waitsWithAReasonWhileNothingIsPluggedIn() async throws {
        let fixture = HotplugFixture()
        let run = Task { [fixture] in try await fixture.backend().run(into: fixture.sink) }
        fixture.events.send(.initialScanFinished)
        try await eventually("a waiting status") { !fixture.statuses.all.isEmpty }
        let first = try #require(fixture.statuses.all.first)
        #expect(first.state == .waiting(reason: "no ANT stick plugged in"))
        #expect(first.transport == .ant)
        #expect(first.device == "ant")
        fixture.events.send(.added(device("ttyUSB0")))
        fixture.events.send(.removed(syspath: "/sys/class/tty/ttyUSB0"))
        try await eventually("waiting again after the unplug") { fixture.statuses.all.filter { $0.device == "ant" }.count == 2 }
        run.cancel()
        try await run.value
    }

    @Test func onlyDevicesOfItsKindAreServed() async throws {
        let fixture = HotplugFixture()
        let run = Task { [fixture] in try await fixture.backend(kind: .serial).run(into: fixture.sink) }
        fixture.events.send(.added(device("ttyUSB0", kind: .ant)))
        fixture.events.send(.added(device("ttyACM0", kind: .serial)))
        fixture.events.send(.initialScanFinished)
        try await eventually("the serial sensor served") { !fixture.children.all.isEmpty }
        try await fixture.settle()
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
        try await eventually("served") { !fixture.children.all.isEmpty }
        try await fixture.settle()
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
        try await eventually("the other stick served") { !fixture.children.all.isEmpty }
        try await fixture.settle()
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
        try await eventually("the child failed") { fixture.children.all.count == 1 }
        try await eventually("waiting again once nothing is served") { fixture.statuses.all.count == 2 }
        fixture.events.send(.added(device("ttyUSB0")))
        try await eventually("tried again on the next plug") { fixture.children.all.count == 2 }
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
