import CLIStore
import CLISupport
import HealthClient
import HealthWire
import Ingest

extension ReplayCommand {
    /// Replays each file through the store service (Import): the daemon's own decode,
    /// convert, authorize and store path, as source hrmd. Prints the service's messages on
    /// stderr, then the same summary line and exit status as a replay into a file.
    func replayThroughService() throws(CommandFailure) {
        let service = try ServiceStoreAccess.system(app: "hrmctl")
        var total = RecordingImportSummary()
        for file in files {
            let result = try service.importRecording(path: file, acceptDamaged: acceptDamaged, speed: realtime ? 1 : speed)
            for message in result.messages { printError(message, program: "hrmctl") }
            let summary = result.summary
            total.frames += summary.frames
            total.stored += summary.stored
            total.unchanged += summary.unchanged
            total.denied += summary.denied
            total.lost += summary.lost
            total.badLines += summary.badLines
            total.skipped.merge(summary.skipped.filter { $0.value > 0 }, uniquingKeysWith: +)
            total.heartRateShareStatus = summary.hrmdMayShare ? .sharingAuthorized : .sharingDenied
        }
        total.storedNothingForLackOfAuthorization = !total.mayShareHeartRate && total.denied > 0 && total.stored == 0
        try Self.conclude(total)
    }
}
