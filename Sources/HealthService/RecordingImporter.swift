import HealthModel
import HealthRequests
import HealthStore
import HealthWire
import Logging
import Synchronization

/// What the service's `Import` does with a recording a manager hands over, once the caller
/// may import and a store worker is free: reads it from the descriptor and stores what it
/// holds. hrmd's assembly supplies it (the daemon's own decode, convert, authorize and store
/// path, the same as `hrmctl replay`), so the service knows no recording format and no ingest
/// of its own.
public protocol RecordingImports: Sendable {
    /// Imports the recording open as `descriptor` (the caller keeps it open and closes it) as
    /// `options` say, blocking until what it holds is stored; each line to show the caller
    /// goes to `message` as it comes. Throws `badData` when the recording cannot be read.
    func importRecording(
        _ options: ImportOptions, from descriptor: Int32, message: @escaping @Sendable (String) -> Void
    ) throws(RequestFailure) -> RecordingImportSummary
}

/// Runs the imports managers ask for through the imports hrmd supplies, on the store
/// workers, keeping the lines shown to the caller within the bus's budget. Two at a time at
/// most: an import holds a store worker for as long as it paces.
final class RecordingImporter: Sendable {
    private let imports: any RecordingImports
    private let logger: Logger
    private let running = UserSlots(
        perUser: HealthBusLimits.importsPerUser, inAll: RecordingImporter.concurrentImports, what: "imports running")
    private let workers: StoreWorkers
    static let concurrentImports = 2

    init(imports: any RecordingImports, workers: StoreWorkers, logger: Logger) {
        self.imports = imports
        self.workers = workers
        self.logger = logger
    }

    func run(_ options: ImportOptions, from descriptor: Int32, uid: UInt32) async throws(RequestFailure)
        -> ImportResult
    {
        try running.take(for: uid)
        defer { running.release(for: uid) }
        let (imports, logger) = (imports, logger)
        let name = options.fileName
        return try await workers.run { () throws(RequestFailure) -> ImportResult in
            let messages = Mutex<(lines: [String], dropped: Int)>(([], 0))
            let result = try imports.importRecording(options, from: descriptor) { line in
                messages.withLock { messages in
                    if messages.lines.count < HealthBusLimits.importMessages { messages.lines.append(line) } else { messages.dropped += 1 }
                }
            }
            var lines = messages.withLock { $0 }
            if lines.dropped > 0 { lines.lines.append("\(name): \(lines.dropped) more messages") }
            logger.notice("imported a recording: \(result)", metadata: ["file": .string(name)])
            return ImportResult(summary: result, messages: lines.lines)
        }
    }
}
