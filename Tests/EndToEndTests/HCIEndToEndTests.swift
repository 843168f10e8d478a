@preconcurrency import Glibc
import Foundation
import TestSupport
import Testing

/// Whether this kernel lacks Bluetooth sockets, as the one these tests were written on does.
private let kernelHasNoBluetooth: Bool = {
    let probe = socket(AF_BLUETOOTH, Int32(SOCK_RAW.rawValue), 1)
    defer { if probe >= 0 { close(probe) } }
    return probe < 0 && errno == EAFNOSUPPORT
}()

private let strap = "AA:BB:CC:DD:EE:01"
private let noBluetooth = "the kernel has no Bluetooth support (socket(AF_BLUETOOTH): EAFNOSUPPORT)"

/// The built hrmd with `--sensor hci`: on a kernel without Bluetooth it says so, shows the
/// waiting row, and keeps running until told to stop.
@Suite("hrmd with --sensor hci", .serialized, .timeLimit(.minutes(2)))
struct HCIEndToEndTests {
    private func devices(_ harness: Harness) async throws -> [[String: Any]] {
        let result = try await harness.hrmctl(["devices", "--output", "json", "--store", harness.store], withStore: false)
        return result.stdout.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }

    @Test("no Bluetooth in the kernel: a waiting row in hrmctl devices, hrmd keeps running, SIGTERM exits 0",
        .enabled(if: kernelHasNoBluetooth, "this kernel has Bluetooth sockets"))
    func noBluetoothWaitedOut() async throws {
        let harness = try Harness()
        let daemon = try harness.startDaemon(["--log-level", "debug", "--sensor", "hci", "--sensor", "ble:\(strap)"])
        try await eventually("the state in the log") {
            daemon.standardError.contains("\(strap): waiting (\(noBluetooth))")
        }
        try await eventually("the waiting row") {
            try await devices(harness).contains {
                $0["identifier"] as? String == strap && $0["state"] as? String == "waiting" && $0["stateDetail"] as? String == noBluetooth
                    && $0["transport"] as? String == "ble"
            }
        }
        let table = try await harness.hrmctl(["devices", "--store", harness.store], withStore: false)
        #expect(table.stdout.contains("waiting") && table.stdout.contains(noBluetooth), "\(table.stdout)")
        // A negative check, made after two more flushes while the backend waits and retries.
        try await daemon.waitForFlushes(2, after: daemon.flushes, "the waiting row")
        #expect(daemon.isRunning, "\(daemon.standardError)")
        daemon.send(SIGTERM)
        #expect(try await daemon.wait() == .exited(0), "\(daemon.standardError)")
    }

    @Test("bare hci with --duration: the backend's own waiting state, and exit 0",
        .enabled(if: kernelHasNoBluetooth, "this kernel has Bluetooth sockets"))
    func durationEnds() async throws {
        let harness = try Harness()
        let result = try await ChildProcess.run(
            BuiltProducts.hrmd, ["--store", harness.store, "--sensor", "hci:hci0", "--duration", "3"],
            environment: harness.environment, in: harness.directory)
        #expect(result.exitCode == 0, "\(result.stderr)")
        #expect(result.stderr.contains("hci:hci0: waiting (\(noBluetooth))"), "\(result.stderr)")
    }

    @Test("usage errors: ble with hci, two adapters, a bad adapter name", arguments: [
        ["--sensor", "hci", "--sensor", "ble"], ["--sensor", "hci:hci0", "--sensor", "hci:hci1"], ["--sensor", "hci:wlan0"],
    ])
    func usageErrors(arguments: [String]) async throws {
        let harness = try Harness()
        let result = try await ChildProcess.run(
            BuiltProducts.hrmd, ["--store", harness.store, "--duration", "1"] + arguments,
            environment: harness.environment, in: harness.directory)
        #expect(result.exitCode == 64, "\(result.stderr)")
        #expect(result.stderr.split(separator: "\n").count <= 3, "a short error: \(result.stderr)")
    }
}
