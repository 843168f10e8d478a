import Foundation
import TestSupport

/// The real `hrmd` reading 20 fake straps × 4 Hz for 60 s from the fake bluetoothd on a
/// private bus (StartNotify, then AcquireNotify; stopped with SIGTERM): heart-rate samples
/// stored against notifications sent, CPU time per 1000 notifications, peak RSS and bytes
/// written to storage per sample stored; and, in the same run, the peer: a minimal bleak
/// logger storing the same notifications into SQLite (`bench/run_ble_bench.sh`); and the
/// floor under both, a C program on sd-bus that only receives and counts the notifications
/// (`bench/run_floor_bench.sh`), on each notify path.
struct BLEBenchmark {
    let scratch: BenchScratch
    let straps = 20
    let hz = 4
    let seconds = 60

    struct Run {
        var sent: Int
        var stored: Int
        /// Samples of every type (heart rate, RR, energy).
        var storedInAll: Int
        var cpuSeconds: Double
        var peakKB: Int
        var writtenBytes: Int?
    }

    func run() async throws {
        print("ble: \(straps) fake straps × \(hz) Hz for \(seconds) s through the fake bluetoothd")
        var hrmdCPU: Double?
        var hrmdWritten: Double?
        var startNotifyFloor: Floor?
        for acquire in [false, true] {
            let floor = try await floor(acquire: acquire)
            if !acquire { startNotifyFloor = floor }
            let mode = acquire ? "AcquireNotify" : "StartNotify"
            guard let run = try await runDaemon(acquire: acquire) else { continue }
            report("hrmd \(mode): sent / heart-rate stored", "\(run.sent) / \(run.stored)")
            let perThousand = run.cpuSeconds / Double(max(run.sent, 1)) * 1e6
            report("hrmd \(mode): CPU per 1000 notifications", "\(format(perThousand, 1)) ms", "\(format(run.cpuSeconds, 2)) s CPU in all")
            report("hrmd \(mode): peak RSS (VmHWM)", "\(format(Double(run.peakKB) / 1024, 1)) MB", "goal < 20 MB")
            if let written = run.writtenBytes, run.storedInAll > 0 {
                let perSample = Double(written) / Double(run.storedInAll)
                report(
                    "hrmd \(mode): bytes written per sample", "\(format(perSample, 1)) B",
                    "write_bytes just before SIGTERM over the \(run.storedInAll) samples stored, all types")
                if !acquire { hrmdWritten = perSample }
            }
            if let floor {
                report(
                    "floor \(mode): CPU per 1000 notifications", "\(format(floor.cpu.whole, 1)) ms",
                    "C on sd-bus, receiving only, \(floor.received) received; \(format(floor.cpu.recording, 1)) ms once subscribed")
                report("ratio hrmd / floor CPU (\(mode))", "\(format(perThousand / floor.cpu.whole, 2))×")
            }
            if !acquire { hrmdCPU = perThousand }
        }
        if let peer = try await bleakPeer() {
            report("peer: bleak StartNotify: received / rows", "\(peer.received) / \(peer.rows)")
            report(
                "peer: bleak CPU per 1000 notifications", "\(format(peer.cpu.whole, 1)) ms",
                "\(format(peer.cpu.recording, 1)) ms once subscribed")
            report("peer: bleak logger peak RSS", "\(format(peer.peakMiB, 1)) MB")
            if let hrmdCPU {
                report("ratio hrmd / bleak CPU (StartNotify)", "\(format(hrmdCPU / peer.cpu.whole, 3))", "goal ≤ 0.1")
            }
            if let floor = startNotifyFloor {
                report(
                    "ratio floor / bleak CPU (StartNotify)", "\(format(floor.cpu.whole / peer.cpu.whole, 3))",
                    "the least any BlueZ client spends, against the goal's 0.1")
            }
            if let written = peer.writtenBytes, peer.rows > 0 {
                let perRow = Double(written) / Double(peer.rows)
                report("peer: bleak bytes written per row stored", "\(format(perRow, 1)) B", "write_bytes just before it stops")
                if let hrmdWritten { report("ratio hrmd / bleak bytes written per sample", "\(format(hrmdWritten / perRow, 2))×") }
            }
        }
        print("")
    }

    private func scenario(acquire: Bool) -> String {
        let devices = (0..<straps).map { index in
            let address = String(format: "C0:FF:EE:00:%02X:%02X", index / 256, index % 256)
            return #"{"address": "\#(address)", "name": "Bench strap \#(index)", "trusted": true, "location": 1, "auto_stream_hz": \#(hz), "notify_acquired": \#(acquire)}"#
        }
        return #"{"adapters": ["hci0"], "devices": [\#(devices.joined(separator: ", "))]}"#
    }

    private func runDaemon(acquire: Bool) async throws -> Run? {
        let directory = try TemporaryDirectory(prefix: "hrmbench-ble")
        let bus = try await PrivateBus()
        defer { bus.stop() }
        let fake = try await FakeBlueZ(bus: bus, scenario: scenario(acquire: acquire), in: directory)
        defer { fake.kill() }
        let store = directory.file("ble.sqlite")
        guard try await grantHRMD(store: store, in: directory.path, for: "hrmd with BLE straps") else { return nil }
        var environment = ProcessInfo.processInfo.environment
        environment["DBUS_SYSTEM_BUS_ADDRESS"] = bus.address
        let daemon = try ChildProcess(
            BuiltProducts.hrmd, ["--store", store, "--sensor", "ble"], environment: environment, outputDirectory: directory.path)
        let run = try await StoppedDaemon.run(daemon, for: .seconds(seconds))
        guard run.termination == .exited(0), let usage = daemon.usage else {
            report("hrmd with BLE straps", "failed", "\(run.termination): \(daemon.standardError.suffix(300))")
            return nil
        }
        let sent = try await fake.stats()["sent"] as? Int ?? 0
        let stored = try storedSamples(in: store)
        return Run(
            sent: sent, stored: stored[.heartRate] ?? 0, storedInAll: stored.values.reduce(0, +), cpuSeconds: cpuSeconds(usage),
            peakKB: run.memory.peakKB, writtenBytes: run.writtenBytes)
    }

    private struct Peer {
        var received: Int
        var rows: Int
        var cpu: CPUPerThousand
        var peakMiB: Double
        var writtenBytes: Int?
    }

    private struct Floor {
        var received: Int
        var cpu: CPUPerThousand
    }

    /// A bench script's CPU time per 1000 notifications (its summary.json), ms.
    private struct CPUPerThousand {
        /// The whole process: start-up, connections, recording.
        var whole: Double
        /// Once every strap was subscribed.
        var recording: Double

        init(_ summary: [String: Any]) {
            whole = summary["cpu_ms_per_1000_notifications"] as? Double ?? 0
            recording = summary["cpu_recording_ms_per_1000_notifications"] as? Double ?? 0
        }
    }

    /// The floor on one notify path, or nil (reported) when it could not be measured.
    private func floor(acquire: Bool) async throws -> Floor? {
        let summary = try await runScript(
            "bench/run_floor_bench.sh", output: "ble-floor-\(acquire ? "acquire" : "start")", extra: ["ACQUIRE": acquire ? "1" : "0"],
            what: "floor")
        guard let summary else { return nil }
        return Floor(received: summary["notifications_received"] as? Int ?? 0, cpu: CPUPerThousand(summary))
    }

    /// Runs one of the bench scripts with this benchmark's straps, rate and length, and reads
    /// the summary.json it leaves; nil (reported) when it failed.
    private func runScript(_ path: String, output: String, extra: [String: String] = [:], what: String) async throws -> [String: Any]? {
        // This file is Benchmarks/Sources/hrmbench/BLEBenchmark.swift in the repository.
        let repository = ((#filePath as NSString).deletingLastPathComponent as NSString).appendingPathComponent("../../..")
        let out = scratch.file(output)
        var environment = ProcessInfo.processInfo.environment
        environment["BENCH_OUT"] = out
        environment["STRAPS"] = "\(straps)"
        environment["HZ"] = "\(hz)"
        environment["SECONDS_TO_RUN"] = "\(seconds)"
        environment.merge(extra) { $1 }
        let script = (repository as NSString).appendingPathComponent(path)
        let child = try ChildProcess("/bin/bash", [script], environment: environment, outputDirectory: scratch.directory.path)
        guard try await child.wait(timeout: .seconds(Double(seconds) + 300)) == .exited(0),
            let data = FileManager.default.contents(atPath: out + "/summary.json"),
            let summary = try JSONSerialization.jsonObject(with: data) as? [String: Any]
        else {
            report(what, "not measured", "\(child.standardError.suffix(300))")
            return nil
        }
        return summary
    }

    private func bleakPeer() async throws -> Peer? {
        guard let summary = try await runScript("bench/run_ble_bench.sh", output: "ble-peer", what: "peer: bleak logger") else { return nil }
        return Peer(
            received: summary["notifications_received"] as? Int ?? 0, rows: summary["rows"] as? Int ?? 0,
            cpu: CPUPerThousand(summary), peakMiB: summary["peak_rss_mib"] as? Double ?? 0,
            writtenBytes: summary["write_bytes"] as? Int)
    }
}
