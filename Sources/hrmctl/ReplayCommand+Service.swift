import HealthModel
import HealthRequests
import StoreTransport
import CommandSupport
import HealthClient
import HealthWire
import Ingest

extension ReplayCommand {
    /// Replays each file through the store service (Import): the daemon's own decode,
    /// convert, authorize and store path, as source hrmd. Prints the service's messages on
    /// stderr, then the same summary line and exit status as a replay into a file.
    func replayThroughService() async throws(CommandFailure) {
        let service = try ServiceTransport.system(app: "hrmctl")
        var total = RecordingImportSummary()
        for file in files {
            let result = try await service.importRecording(
                path: file, acceptDamaged: acceptDamaged, speed: realtime ? 1 : speed, measurementHandle: handle)
            for message in result.messages { printError(message, program: "hrmctl") }
            total.add(result.summary)
        }
        try Self.conclude(total)
    }
}
