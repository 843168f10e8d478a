import ArgumentParser
import CLISupport
import Foundation
import HealthStore
import Ingest
import Logging
import SensorBackends
import SensorDecoding
import Timestamps

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
            var ingestor = FrameIngestor(
                store: store, settings: IngestSettings(source: HealthSource(name: "hrmd", version: HRMVersion.current), maxBatch: 10_000),
                logger: logger)
            var badLines = 0
            for file in files {
                badLines += try replay(file, into: &ingestor)
            }
            ingestor.finish()
            try summarize(ingestor, badLines: badLines)
        }
    }

    /// Feeds one file; returns its number of bad lines (and unusable parts).
    private func replay(_ file: String, into ingestor: inout FrameIngestor) throws(CommandFailure) -> Int {
        var pace = Pace(speed: realtime ? 1 : speed)
        var badLines = 0
        func take(_ entry: RecordingEntry) {
            switch entry {
            case .frame(let frame, _):
                pace.wait(until: frame.time)
                ingestor.accept(frame)
            case .badLine(let line, let reason):
                badLines += 1
                if badLines <= 50 { printError("\(file):\(line): \(reason)", program: "hrmctl") }
            case .unusable(let reason):
                badLines += 1
                printError("\(file): \(reason)", program: "hrmctl")
            }
        }
        do {
            switch try TraceRecording.kind(of: file) {
            case .trace:
                var recording = try TraceRecording(path: file)
                let total = (try? FileManager.default.attributesOfItem(atPath: file)[.size] as? Int) ?? 0
                var progress = ProgressLine(label: (file as NSString).lastPathComponent, total: total)
                while let entry = recording.next() {
                    if case .frame = entry {} else { progress.clear() }
                    take(entry)
                    progress.update(recording.bytesRead)
                }
                progress.finish()
            case .fit:
                let recording = try FITRecording(path: file, acceptingDamage: acceptDamaged)
                if let damage = recording.damage {
                    printError("\(file): \(damage); storing what was read before it", program: "hrmctl")
                }
                recording.entries.forEach(take)
            }
        } catch {
            if case .unreadable(_, _, true) = error { throw CommandFailure("\(error)", status: .noInput) }
            throw CommandFailure("\(error)", status: .dataError)
        }
        if badLines > 50 { printError("\(file): \(badLines - 50) more bad lines", program: "hrmctl") }
        return badLines
    }

    private func summarize(_ ingestor: FrameIngestor, badLines: Int) throws(CommandFailure) {
        let counters = ingestor.counters
        var parts = ["\(counters.frames) frames", "\(counters.stored) samples stored", "\(counters.unchanged) already stored"]
        if counters.denied > 0 { parts.append("\(counters.denied) not authorized") }
        let skips = ingestor.skipTotals
        if !skips.isEmpty {
            var byReason: [String: Int] = [:]
            for skip in skips { byReason[skip.reason, default: 0] += skip.count }
            parts.append("skipped " + byReason.sorted { $0.key < $1.key }.map { "\($0.value) (\($0.key))" }.joined(separator: ", "))
        }
        if badLines > 0 { parts.append("\(badLines) bad lines") }
        if counters.lost > 0 { parts.append("\(counters.lost) could not be written") }
        print("replayed: " + parts.joined(separator: "; "))
        if ingestor.authorizationStatuses[.heartRate] != .sharingAuthorized && counters.denied > 0 && counters.stored == 0 {
            throw CommandFailure(
                "hrmd may not store heart-rate, so nothing was stored; grant it with: hrmctl auth grant hrmd heart-rate",
                status: .permissionDenied)
        }
        if counters.lost > 0 { throw CommandFailure("\(counters.lost) samples could not be written to the store", status: .failure) }
        if badLines > 0 { throw CommandFailure("\(badLines) bad lines were skipped; the good ones are stored", status: .dataError) }
    }
}

/// Paces a replay: nil plays as fast as possible, otherwise the recorded gaps ÷ speed.
private struct Pace {
    private let speed: Double?
    private var origin: (recorded: Timestamp, started: ContinuousClock.Instant)?

    init(speed: Double?) { self.speed = speed }

    mutating func wait(until time: Timestamp) {
        guard let speed else { return }
        guard let origin else {
            origin = (time, .now)
            return
        }
        let offset = Double(time.microsecondsSinceEpoch - origin.recorded.microsecondsSinceEpoch) / 1e6 / speed
        let remaining = origin.started.advanced(by: .seconds(max(0, offset))) - .now
        let microseconds = Double(remaining.components.seconds) * 1e6 + Double(remaining.components.attoseconds) / 1e12
        if microseconds > 0 { usleep(useconds_t(min(microseconds, 60e6))) }
    }
}
