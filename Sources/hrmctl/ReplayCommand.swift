import ArgumentParser
import CommandSupport
import Foundation
import HRMConfiguration
import HealthModel
import HealthStore
import Ingest
import Logging
import ReaderThreads
import Recordings

/// `hrmctl replay`: recordings through the same path as live data.
struct ReplayCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "replay",
        abstract: "Store the samples of recorded traces, FIT files and btsnoop captures, through the same path as live data.",
        discussion: """
            Each FILE is an hrmd trace (written by hrmd --record), a FIT
            activity file from a watch or bike computer, or a btsnoop capture of the
            Bluetooth host interface (btmon -w, Android's btsnoop_hci.log), told apart by
            their content. Their frames go through the same decode → convert → authorize
            → store path as live data, with their original timestamps, under the source
            "hrmd" (so the same authorization applies, and a replay of what hrmd stored
            live, or of the same file twice, stores nothing new).

            Bad trace lines are reported with their line numbers and skipped; the good
            ones are still stored, and the exit status is then 65. A FIT file's
            heart_rate records become heart-rate samples (255, FIT's "invalid", never
            does), its hrv messages RR intervals, its device_info the device. Device-
            relative FIT times are stored only when the file gives an absolute anchor
            (timestamp_correlation); otherwise hrmctl says so and exits 65. A truncated
            or corrupt FIT file is exit 65 with what was read before the damage;
            --accept-damaged stores that part.

            A btsnoop capture (datalinks 1001, 1002 and 2001) gives the heart-rate
            notifications of each LE connection it holds, at the capture's times, under
            the strap's address; the reads of 0x2A38, 0x2A19 and the Device Information
            strings describe it. The handles are learned from the GATT discovery in the
            capture. When a capture holds none (it began later, or the host had the
            strap's attributes cached), the handle whose notifications all decode as
            heart-rate measurements is taken, and hrmctl says so (when several could
            be, none is stored: exit 65); --handle names it instead. A connection open before the capture began is stored under the
            device hci-conn-0xNNNN (its address is unknown), which hrmctl says too. Bad
            or truncated records are reported with their record numbers and skipped;
            the good ones are stored, and the exit status is then 65.

            A progress bar shows on a terminal.

            EXIT STATUS
              0 all stored (or already stored), 65 bad lines or records, or an
              unreadable format, 66 a file or the store is missing, 77 hrmd may
              not store heart-rate, 1 anything else.

            EXAMPLES
              hrmctl replay /var/lib/hrmd/traces/hrmd-20261120T100000.000Z.trace.jsonl
              hrmctl replay --realtime session.trace.jsonl
              hrmctl replay Morning_Ride.fit
              hrmctl replay btsnoop_hci.log
              hrmctl replay --handle 0x000e late-start.btsnoop
            """)

    @OptionGroup var storeOptions: StoreOptions
    @Option(help: ArgumentHelp("Play N times faster than recorded (default: as fast as possible).", valueName: "n"))
    var speed: Double?
    @Flag(help: "Play at the recorded pace (the same as --speed 1).") var realtime = false
    @Flag(help: "Store what a damaged (truncated or corrupt) FIT file holds before the damage.")
    var acceptDamaged = false
    @Option(
        help: ArgumentHelp(
            "The ATT handle of the Heart Rate Measurements in btsnoop captures that hold no GATT discovery (0x000e or 14); it wins over discovery.",
            valueName: "handle"),
        transform: { text in
            guard let handle = ATTHandleText.parse(text) else { throw ValidationError("--handle must be an ATT handle 0x0001…0xffff") }
            return handle
        })
    var handle: UInt16?
    @Argument(help: "Recordings to replay.") var files: [String]

    func validate() throws {
        if let speed, !(speed > 0 && speed.isFinite) { throw ValidationError("--speed must be a positive number") }
        if realtime && speed != nil { throw ValidationError("--realtime and --speed exclude each other") }
    }

    func run() async throws {
        try await reportingFailures {
            for file in files where !FileManager.default.fileExists(atPath: file) {
                throw CommandFailure("recording \(file) does not exist", status: .noInput)
            }
            if try storeOptions.usesService { return try await replayThroughService() }
            try await onOwnThread(named: "hrmctl-replay") { try replayIntoFile() }
        }
    }

    /// Replays each file into the store file itself. Synchronous work (SQLite writes, paced by
    /// the recording's own clock at --realtime or --speed), so it runs on a thread of its own.
    private func replayIntoFile() throws {
        let store = try storeOptions.location.open(.existingOnly)
        // The readings make events by the rules the daemon uses: --config's, else the system file's.
        let alerts = try ConfigurationFile.load(explicitPath: storeOptions.config).alerts
        var logger = Logger(label: "hrmctl") { StreamLogHandler.standardError(label: $0) }
        logger.logLevel = .error
        let progress = ProgressBox()
        var recordings = RecordingImport(
            store: store, settings: IngestSettings(source: HealthSource(name: "hrmd", version: HRMVersion.current), maxBatch: 10_000, alerts: alerts),
            options: RecordingImport.Options(
                speed: realtime ? 1 : speed, acceptDamaged: acceptDamaged, capture: BTSnoopOptions(measurementHandle: handle)),
            logger: logger
        ) { message in
            progress.line?.clear()
            printError(message, program: "hrmctl")
        }
        for file in files {
            progress.line = ProgressLine(label: (file as NSString).lastPathComponent, total: Self.size(of: file))
            defer { progress.line?.finish() }
            do throws(RecordingError) {
                try recordings.replay(path: file) { progress.line?.update($0) }
            } catch {
                if case .unreadable(_, _, true) = error { throw CommandFailure("\(error)", status: .noInput) }
                throw CommandFailure("\(error)", status: .dataError)
            }
        }
        try Self.conclude(recordings.finish())
    }

    private static func size(of file: String) -> Int {
        (try? FileManager.default.attributesOfItem(atPath: file)[.size] as? Int) ?? 0
    }

    /// Prints the totals and turns them into the exit status.
    static func conclude(_ summary: RecordingImportSummary) throws(CommandFailure) {
        print("replayed: \(summary)")
        if summary.storedNothingForLackOfAuthorization {
            throw CommandFailure(
                "hrmd may not store heart-rate, so nothing was stored; grant it with: hrmctl auth grant hrmd heart-rate",
                status: .permissionDenied)
        }
        if summary.lost > 0 { throw CommandFailure("\(summary.lost) samples could not be written to the store", status: .failure) }
        let bad = [(summary.badLines, "lines"), (summary.badRecords, "records")].filter { $0.0 > 0 }
        if !bad.isEmpty {
            let what = bad.map { "\($0.0) bad \($0.1)" }.joined(separator: " and ")
            throw CommandFailure("\(what) were skipped; the good ones are stored", status: .dataError)
        }
    }
}

/// The progress line of the recording being replayed, cleared before each message.
private final class ProgressBox {
    var line: ProgressLine?
}
