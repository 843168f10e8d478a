import CLIStore
import CLISupport
import HealthClient
import HealthWire

extension ReplayCommand {
    /// Replays each file through the store service (Import): the daemon's own decode,
    /// convert, authorize and store path, as source hrmd. Prints the service's messages on
    /// stderr, then the same summary line and exit status as a replay into a file.
    func replayThroughService() throws(CommandFailure) {
        let service = try ServiceStoreAccess.system(app: "hrmctl")
        var total = ImportSummary()
        var mayShare = true
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
            total.skipped.merge(summary.skipped, uniquingKeysWith: +)
            mayShare = summary.hrmdMayShare
        }
        total.hrmdMayShare = mayShare
        try Self.summarize(total)
    }

    /// The summary line and the exit status of a replay's counts.
    static func summarize(_ summary: ImportSummary) throws(CommandFailure) {
        var parts = ["\(summary.frames) frames", "\(summary.stored) samples stored", "\(summary.unchanged) already stored"]
        if summary.denied > 0 { parts.append("\(summary.denied) not authorized") }
        let skipped = summary.skipped.filter { $0.value > 0 }
        if !skipped.isEmpty {
            parts.append("skipped " + skipped.sorted { $0.key < $1.key }.map { "\($0.value) (\($0.key))" }.joined(separator: ", "))
        }
        if summary.badLines > 0 { parts.append("\(summary.badLines) bad lines") }
        if summary.lost > 0 { parts.append("\(summary.lost) could not be written") }
        print("replayed: " + parts.joined(separator: "; "))
        if !summary.hrmdMayShare && summary.denied > 0 && summary.stored == 0 {
            throw CommandFailure(
                "hrmd may not store heart-rate, so nothing was stored; grant it with: hrmctl auth grant hrmd heart-rate",
                status: .permissionDenied)
        }
        if summary.lost > 0 { throw CommandFailure("\(summary.lost) samples could not be written to the store", status: .failure) }
        if summary.badLines > 0 { throw CommandFailure("\(summary.badLines) bad lines were skipped; the good ones are stored", status: .dataError) }
    }
}
