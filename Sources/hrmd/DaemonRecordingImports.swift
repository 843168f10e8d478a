import HealthModel
import HealthRequests
import HealthService
import HealthStore
import HeartRateEvents
import Ingest
import Logging
import Recordings

/// The store service's imports as hrmd makes them: each recording through the daemon's own
/// decode, convert, authorize and store path (the same as `hrmctl replay`), as `source`.
struct DaemonRecordingImports: RecordingImports {
    let store: HealthStore
    let source: HealthSource
    /// The rules replayed readings make events by, as live ones (`[alerts]`).
    let alerts: AlertRules
    let logger: Logger

    func importRecording(
        _ options: ImportOptions, from descriptor: Int32, message: @escaping @Sendable (String) -> Void
    ) throws(RequestFailure) -> RecordingImportSummary {
        var importer = RecordingImport(
            store: store, settings: IngestSettings(source: source, maxBatch: 10_000, alerts: alerts),
            options: RecordingImport.Options(
                speed: options.speed, acceptDamaged: options.acceptDamaged ?? false,
                capture: BTSnoopOptions(measurementHandle: options.measurementHandle.flatMap { UInt16(exactly: $0) })),
            logger: logger, messages: message)
        do throws(RecordingError) {
            try importer.replay(descriptor: descriptor, name: options.fileName)
        } catch {
            throw RequestFailure(.badData, error.description)
        }
        return importer.finish()
    }
}
