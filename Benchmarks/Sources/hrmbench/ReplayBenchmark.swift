import BluetoothWire
import Foundation
import SensorFrames
import TestSupport
import Timestamps
import TraceFormat

/// `hrmctl replay` of a generated 1M-frame trace into a fresh store: frames per second, next
/// to the store's bulk save of the same number of samples (measured in the same run); and of
/// a btsnoop capture of the same notifications (HCI UART, as Android writes), notifications
/// per second next to the trace's.
struct ReplayBenchmark {
    let scratch: BenchScratch
    let count = 1_000_000
    /// Seconds the store benchmark took for the same count, when it ran.
    let bulkSaveSeconds: Double?

    static let strap = BluetoothAddress("AA:BB:CC:DD:EE:FF")!
    static let start = Timestamp(microsecondsSinceEpoch: 1_767_225_600_000_000)

    /// The heart rates, one a second, the same in both recordings.
    func measurements() -> [[UInt8]] {
        var random = BenchRandom(state: 11)
        return (0..<count).map { _ in
            HeartRateMeasurement(heartRate: UInt16(random.next(in: 50...180)), sensorContact: .detected).encoded()
        }
    }

    func run() async throws {
        print("replay: hrmctl replay of a generated \(count)-frame trace (1 Hz heart rate, no RR), and of a btsnoop capture of the same notifications")
        let values = measurements()
        let trace = try writeTrace(values)
        let capture = try writeCapture(values)
        guard let traceRun = try await bestReplay(of: trace, label: "trace") else { return }
        report("hrmctl replay (best of 3)", "\(format(traceRun.seconds)) s", "\(format(Double(count) / traceRun.seconds / 1000, 0))k frames/s; \(traceRun.summary)")
        report("  its peak resident memory", "\(format(Double(traceRun.memory.peakKB) / 1024, 1)) MB", "goal < 64 MB for any file")
        if let bulkSaveSeconds {
            report("ratio replay / store bulk save", "\(format(traceRun.seconds / bulkSaveSeconds))×", "goal ≤ 1.5×")
        }
        guard let captureRun = try await bestReplay(of: capture, label: "btsnoop") else { return }
        report(
            "hrmctl replay of a btsnoop capture (best of 3)", "\(format(captureRun.seconds)) s",
            "\(format(Double(count) / captureRun.seconds / 1000, 0))k notifications/s; \(captureRun.summary)")
        report("  its peak resident memory", "\(format(Double(captureRun.memory.peakKB) / 1024, 1)) MB", "goal < 64 MB for any file")
        report("ratio btsnoop / trace replay", "\(format(captureRun.seconds / traceRun.seconds))×", "the same notifications into the store")
        try await replayLongFIT()
        print("")
    }

    private func writeTrace(_ values: [[UInt8]]) throws -> String {
        let trace = scratch.file("bench.trace.jsonl")
        var text = TraceLine.header() + "\n"
        text.reserveCapacity(count * 140)
        for (index, value) in values.enumerated() {
            text += TraceLine.encode(SensorFrame(
                time: Self.start.advanced(bySeconds: Double(index)), transport: .ble, device: SensorID(Self.strap.description),
                kind: .notify, characteristic: .heartRateMeasurement, value: value)) + "\n"
        }
        try text.write(toFile: trace, atomically: false, encoding: .utf8)
        return trace
    }

    /// The connection, a Find Information naming 0x000A as 0x2A37, then one notification a second.
    private func writeCapture(_ values: [[UInt8]]) throws -> String {
        let path = scratch.file("bench.btsnoop")
        let first = Self.start.microsecondsSinceEpoch
        var builder = CaptureBuilder(datalink: .uart, start: first - 1_000_000)
        builder.connectionComplete(handle: 0x40, peer: Self.strap)
        builder.discoverMeasurement(at: 0x0A, on: 0x40)
        for (index, value) in values.enumerated() {
            builder.clock = first + Int64(index) * 1_000_000
            builder.receive(.handleValueNotification(handle: 0x0A, value: value), on: 0x40)
        }
        try Data(builder.bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// The fastest of `rounds` replays of `file` into a fresh store, the highest peak of
    /// resident memory, and the summary line.
    private func bestReplay(of file: String, label: String, rounds: Int = 3) async throws
        -> (seconds: Double, summary: String, memory: MemoryPeak)?
    {
        var elapsed = Double.infinity
        var summary = ""
        var memory = MemoryPeak()
        for round in 1...rounds {
            let store = scratch.file("replay-\(label)-\(round).sqlite")
            let grant = try ChildProcess(BuiltProducts.hrmctl, ["auth", "grant", "hrmd", "heart-rate", "--store", store], outputDirectory: scratch.directory.path)
            _ = try await grant.wait(timeout: .seconds(30))
            let begin = ContinuousClock.now
            let replay = try ChildProcess(BuiltProducts.hrmctl, ["replay", "--store", store, file], outputDirectory: scratch.directory.path)
            let peak = try await MemoryPeak.watch(replay)
            if peak.peakKB > memory.peakKB { memory = peak }
            let termination = try await replay.wait(timeout: .seconds(900))
            elapsed = min(elapsed, seconds(ContinuousClock.now - begin))
            guard termination == .exited(0) else {
                report("hrmctl replay of the \(label)", "failed", "\(termination): \(replay.standardError.prefix(300))")
                return nil
            }
            summary = replay.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        return (elapsed, summary, memory)
    }

    /// `hrmctl replay` of a 90-day FIT file, a heart rate a second (7.8M records, 47 MB):
    /// its peak resident memory, bounded whatever the file's size, and its time.
    private func replayLongFIT() async throws {
        let days = 90
        var builder = FITBuilder()
        builder.define(local: 0, global: 0, fields: [.enumeration(0), .uint16(1), .uint32z(3)])
        builder.data(local: 0, [4] + le16(1) + le32(3_999_000_111))  // an activity by a Garmin device
        builder.define(local: 1, global: 20, fields: [.timestamp, .uint8(3)])
        var random = BenchRandom(state: 90)
        let firstFITTime = UInt32(Self.start.microsecondsSinceEpoch / 1_000_000 - 631_065_600)
        for second in 0..<(days * 86_400) {
            builder.data(local: 1, le32(firstFITTime + UInt32(second)) + [UInt8(random.next(in: 50...180))])
        }
        let path = scratch.file("90-days.fit")
        let bytes = builder.file()
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        guard let run = try await bestReplay(of: path, label: "fit", rounds: 1) else { return }
        report(
            "hrmctl replay of a \(days)-day FIT file", "\(format(run.seconds)) s",
            "\(format(Double(bytes.count) / 1_000_000, 1)) MB, \(days * 86_400) records; \(run.summary)")
        report(
            "  its peak resident memory", "\(format(Double(run.memory.peakKB) / 1024, 1)) MB",
            "anonymous \(format(Double(run.memory.anonymousKB) / 1024, 1)) MB, file-backed \(format(Double(run.memory.fileBackedKB) / 1024, 1)) MB; goal < 64 MB for any file")
    }
}
