import BlueZBackend
import Foundation
import SDBus
import SensorBackend
import SensorFrames
import Synchronization
import TestSupport
import Testing

/// What a backend under test delivered.
final class Collected: Sendable {
    private let frames = Mutex<[SensorFrame]>([])
    private let statuses = Mutex<[SensorStatus]>([])

    var sink: FrameSink {
        FrameSink({ frame in self.frames.withLock { $0.append(frame) } }, status: { status in self.statuses.withLock { $0.append(status) } })
    }

    func frames(of device: String) -> [SensorFrame] { frames.withLock { $0 }.filter { $0.device.rawValue == device } }
    var allFrames: [SensorFrame] { frames.withLock { $0 } }
    func statuses(of device: String) -> [SensorStatus] { statuses.withLock { $0 }.filter { $0.device.rawValue == device } }
    func states(of device: String) -> [SensorState] { statuses(of: device).map(\.state) }

    func notifications(of device: String) -> [[UInt8]] {
        frames(of: device).filter { $0.kind == .notify && $0.characteristic == .heartRateMeasurement }.map(\.value)
    }

    func reads(of device: String, _ characteristic: UInt16) -> [[UInt8]] {
        frames(of: device).filter { $0.kind == .read && $0.characteristic?.rawValue == characteristic }.map(\.value)
    }

    func count(of device: String, _ kind: FrameKind) -> Int { frames(of: device).filter { $0.kind == kind }.count }
}

/// A private bus, the fake bluetoothd on it, and the BlueZ backend running against them.
final class BlueZHarness: @unchecked Sendable {
    let directory: TemporaryDirectory
    let bus: PrivateBus
    var fake: FakeBlueZ
    let collected = Collected()
    let scenario: String

    init(scenario: String) async throws {
        directory = try TemporaryDirectory(prefix: "hrmd-bluez")
        bus = try await PrivateBus()
        self.scenario = scenario
        fake = try await FakeBlueZ(bus: bus, scenario: scenario, in: directory)
    }

    /// Runs the backend while `body` runs, then cancels it and checks it returned (within the hang bound).
    func withBackend(
        addresses: [String] = [], anyStrap: Bool = false, linkAgeDiagnosis: LinkAgeDiagnosis = LinkAgeDiagnosis(),
        _ body: @Sendable (BlueZHarness) async throws -> Void
    ) async throws {
        let settings = BlueZSensors.Settings(
            // No test here waits for these timeouts: they are hang bounds, so a slow fake on a busy
            // machine is not taken for a strap that does not answer.
            addresses: addresses, anyStrap: anyStrap, connectTimeout: HangBound.duration, servicesTimeout: HangBound.duration,
            backoff: Backoff(initial: .milliseconds(100), maximum: .seconds(1), jitter: 0.1),
            linkAgeDiagnosis: linkAgeDiagnosis, busAddress: bus.address)
        let backend = BlueZSensors(settings: settings)
        let sink = collected.sink
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await backend.run(into: sink) }
            defer { group.cancelAll() }
            try await body(self)
            group.cancelAll()
            let stopped = ContinuousClock.now
            try await group.waitForAll()
            // A bound for a backend that ignores cancellation, not a speed: a loaded machine may take seconds.
            #expect(ContinuousClock.now - stopped < HangBound.duration, "the backend stops when cancelled")
        }
    }

    /// Restarts the fake bluetoothd (a crash, then a new one with the same scenario). The new
    /// one starts once the bus daemon has released the old one's name, so it can take it.
    func restartBluetoothd() async throws {
        fake.kill()
        let connection = try DBusConnection.connect(address: bus.address)
        defer { connection.close() }
        try await eventually("org.bluez released by the killed bluetoothd", checkingEvery: .milliseconds(20)) {
            let reply = try await connection.call(
                destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                member: "NameHasOwner", arguments: [.string("org.bluez")])
            return reply == [.bool(false)]
        }
        fake = try await FakeBlueZ(bus: bus, scenario: scenario, in: directory)
    }

    func subscribed(_ address: String) async throws -> Bool {
        try await fake.stats(address)["subscribed"] as? Bool == true
    }

    func counter(_ address: String, _ name: String) async throws -> Int {
        try await fake.stats(address)[name] as? Int ?? -1
    }
}

/// A scenario with these devices (each a JSON object as the fake's usage describes).
func scenario(_ devices: String...) -> String {
    #"{"adapters": ["hci0"], "devices": [\#(devices.joined(separator: ", "))]}"#
}
