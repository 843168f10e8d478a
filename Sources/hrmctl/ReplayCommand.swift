import ArgumentParser
import CLISupport
import Foundation
import HealthStore
import Ingest
import Logging
import SensorBackends

/// `hrmctl replay`: recordings through the same path as live data.
struct ReplayCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "replay",
        abstract: "Store the samples of recorded traces and FIT files, through the same path as live data.",
        discussion: """
            Each FILE is an hrmd trace (written by hrmd --record, CONTRACT.md) or a FIT
            activity file from a watch or bike computer, told apart by their content.
            Their frames go through the same decode → convert → authorize → store path
            as live data, with their original timestamps, under the source "hrmd" (so
            the same authorization applies, and a replay of what hrmd stored live, or of
            the same file twice, stores nothing new).

            Bad trace lines are reported with their line numbers and skipped; the good
            ones are still stored, and the exit status is then 65. A FIT file's
            heart_rate records become heart-rate samples (255, FIT's "invalid", never
            does), its hrv messages RR intervals, its device_info the device. Device-
            relative FIT times are stored only when the file gives an absolute anchor
            (timestamp_correlation); otherwise hrmctl says so and exits 65. A truncated
            or corrupt FIT file is exit 65 with what was read before the damage;
            --accept-damaged stores that part. A progress bar shows on a terminal.

            EXIT STATUS
              0 all stored (or already stored), 65 bad lines or an unreadable format, 66
              a file or the store is missing, 77 hrmd may not store heart-rate, 1
              anything else.

            EXAMPLES
              hrmctl replay /var/lib/hrmd/traces/hrmd-20261120T100000.000Z.trace.jsonl
              hrmctl replay --realtime session.trace.jsonl
              hrmctl replay Morning_Ride.fit
            """)

    @OptionGroup var storeOptions: StoreOptions
    @Option(help: ArgumentHelp("Play N times faster than recorded (default: as fast as possible).", valueName: "n"))
    var speed: Double?
    @Flag(help: "Play at the recorded pace (the same as --speed 1).") var realtime = false
    @Flag(help: "Store what a damaged (truncated or corrupt) FIT file holds before the damage.")
    var acceptDamaged = false
    @Argument(help: "Recordings to replay.") var files: [String]

    func validate() throws {
        if let speed, !(speed > 0 && speed.isFinite) { throw ValidationError("--speed must be a positive number") }
        if realtime && speed != nil { throw ValidationError("--realtime and --speed exclude each other") }
    }

    func run() throws {
        try reportingFailures {
            for file in files where !FileManager.default.fileExists(atPath: file) {
                throw CommandFailure("recording \(file) does not exist", status: .noInput)
            }
            if try storeOptions.usesService { return try replayThroughService() }
            let store = try storeOptions.location.open(.existingOnly)
            var logger = Logger(label: "hrmctl") { StreamLogHandler.standardError(label: $0) }
            logger.logLevel = .error
            let progress = ProgressBox()
            var recordings = RecordingImport(
                store: store, settings: IngestSettings(source: HealthSource(name: "hrmd", version: HRMVersion.current), maxBatch: 10_000),
                options: RecordingImport.Options(speed: realtime ? 1 : speed, acceptDamaged: acceptDamaged), logger: logger
            ) { message in
                progress.line?.clear()
                printError(message, program: "hrmctl")
            }
            for file in files {
                progress.line = ProgressLine(label: (file as NSString).lastPathComponent, total: Self.size(of: file))
                defer { progress.line?.finish() }
                do throws(RecordingError) {
                    try recordings.replay(path: file) { bytesRead, _ in progress.line?.update(bytesRead) }
                } catch {
                    if case .unreadable(_, _, true) = error { throw CommandFailure("\(error)", status: .noInput) }
                    throw CommandFailure("\(error)", status: .dataError)
                }
            }
            try Self.conclude(recordings.finish())
        }
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
        if summary.badLines > 0 {
            throw CommandFailure("\(summary.badLines) bad lines were skipped; the good ones are stored", status: .dataError)
        }
    }
}

/// The progress line of the recording being replayed, cleared before each message.
private final class ProgressBox {
    var line: ProgressLine?
}
