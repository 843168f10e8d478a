import BlueZBackend
import Foundation
import SensorBackends
import SensorDecoding
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

    /// Runs the backend while `body` runs, then cancels it and checks it returned promptly.
    func withBackend(
        addresses: [String] = [], anyStrap: Bool = false, linkAgeDiagnosis: LinkAgeDiagnosis = LinkAgeDiagnosis(),
        _ body: @Sendable (BlueZHarness) async throws -> Void
    ) async throws {
        let settings = BlueZSensors.Settings(
            addresses: addresses, anyStrap: anyStrap, connectTimeout: .seconds(5), servicesTimeout: .seconds(5),
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
            #expect(ContinuousClock.now - stopped < .seconds(30), "the backend stops when cancelled")
        }
    }

    /// Restarts the fake bluetoothd (a crash, then a new one with the same scenario).
    func restartBluetoothd() async throws {
        fake.kill()
        try await Task.sleep(for: .milliseconds(300))
        fake = try await FakeBlueZ(bus: bus, scenario: scenario, in: directory)
    }

    /// Waits until `condition` holds, at most `limit`; records an issue when it never does.
    func eventually(_ what: String, limit: Duration = .seconds(10), _ condition: () async throws -> Bool) async throws {
        let deadline = ContinuousClock.now.advanced(by: limit)
        while ContinuousClock.now < deadline {
            if try await condition() { return }
            try await Task.sleep(for: .milliseconds(50))
        }
        Issue.record("timed out waiting: \(what)")
        throw TimedOut(what: what)
    }

    struct TimedOut: Error { var what: String }

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
