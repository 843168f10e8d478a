import HealthRequests
import HealthModel
import HealthStore
import HealthWire
import Ingest
import Logging
import Recordings
import SDBus
import Synchronization

/// Imports recordings a manager hands over as descriptors through the daemon's own decode,
/// convert, authorize and store path (the same as `hrmctl replay`), as the daemon's source.
/// Two at a time at most: an import holds a store worker for as long as it paces.
final class RecordingImporter: Sendable {
    private let store: HealthStore
    private let source: HealthSource
    private let logger: Logger
    private let running = UserSlots(
        perUser: HealthBusLimits.importsPerUser, inAll: RecordingImporter.concurrentImports, what: "imports running")
    private let workers: StoreWorkers
    static let concurrentImports = 2

    init(store: HealthStore, source: HealthSource, workers: StoreWorkers, logger: Logger) {
        self.store = store
        self.source = source
        self.workers = workers
        self.logger = logger
    }

    func run(_ options: ImportOptions, from descriptor: Int32, uid: UInt32) async throws(RequestFailure)
        -> ImportResult
    {
        try running.take(for: uid)
        defer { running.release(for: uid) }
        let (store, source, logger) = (store, source, logger)
        let name = options.fileName
        return try await workers.run { () throws(RequestFailure) -> ImportResult in
            let messages = Mutex<(lines: [String], dropped: Int)>(([], 0))
            var importer = RecordingImport(
                store: store, settings: IngestSettings(source: source, maxBatch: 10_000),
                options: RecordingImport.Options(
                    speed: options.speed, acceptDamaged: options.acceptDamaged ?? false,
                    capture: BTSnoopOptions(measurementHandle: options.measurementHandle.flatMap { UInt16(exactly: $0) })),
                logger: logger,
                messages: { line in
                    messages.withLock { messages in
                        if messages.lines.count < HealthBusLimits.importMessages { messages.lines.append(line) } else { messages.dropped += 1 }
                    }
                })
            do throws(RecordingError) {
                try importer.replay(descriptor: descriptor, name: name)
            } catch {
                throw RequestFailure(.badData, error.description)
            }
            let result = importer.finish()
            var lines = messages.withLock { $0 }
            if lines.dropped > 0 { lines.lines.append("\(name): \(lines.dropped) more messages") }
            logger.notice("imported \(name): \(result)")
            return ImportResult(summary: result, messages: lines.lines)
        }
    }
}
