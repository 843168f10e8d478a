@preconcurrency import Glibc
import ArgumentParser
import StoreTransport
import HealthModel
import HealthRequests
import CommandSupport
import HealthStore
import Timestamps

/// `hrmctl delete`: one source's samples over a range, or one event, leaving tombstones.
struct DeleteCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "delete",
        abstract: "Delete one source's samples of a type over a range, or one event (--event).",
        discussion: """
            As in HealthKit, a source's samples are deleted as that source: other sources'
            samples are never touched. Through the store service (the default), deleting
            another source's samples needs a manager of the store. Deletions leave tombstones, so programs that follow
            the store's changes see them. Asks for confirmation on a terminal unless --yes;
            without a terminal, --yes is required.

            With --event ID it deletes one event (an id from hrmctl events --output json),
            such as a false alarm; events are hrmd's, so through the store service this
            needs a manager.

            EXAMPLES
              hrmctl delete --source hrmd --since 2026-11-20T10:00:00Z --until 2026-11-20T11:00:00Z
              hrmctl delete --source hrmd --type rr-interval --yes
              hrmctl delete --event 3f2a…-… --yes
            """)

    @OptionGroup var storeOptions: StoreOptions
    @OptionGroup var range: RangeOptions
    @Option(help: ArgumentHelp("The source whose samples go (see hrmctl sources).", valueName: "name")) var source: String?
    @Option(help: ArgumentHelp("Delete this event instead (its id, see hrmctl events --output json).", valueName: "id")) var event: String?
    @Flag(help: "Do not ask for confirmation.") var yes = false

    func validate() throws {
        if event != nil {
            guard source == nil else { throw ValidationError("--event deletes one event: it takes no --source") }
            return
        }
        guard source != nil else { throw ValidationError("name the source whose samples go (--source NAME), or an event (--event ID)") }
        _ = try range.resolved()
    }

    func run() async throws {
        try await reportingFailures {
            if let event { return try await deleteEvent(event) }
            guard let source else { return }
            let (query, _) = try range.resolved()
            let store = try storeOptions.access(.existingOnly)
            var counted = query
            counted.source = source
            let count = try await store.count(counted)
            guard count > 0 else {
                print("no samples")
                return
            }
            let what = "\(count) \(query.type.identifier) samples of \(source)"
            guard try await confirmed(what) else { return }
            let deleted = try await store.deleteSamples(of: query.type, source: source, since: query.since, until: query.until)
            print("deleted \(deleted) \(query.type.identifier) samples of \(source)")
        }
    }

    /// Whether the user wants `what` deleted: --yes, or yes on the terminal; without a
    /// terminal and --yes, a usage error.
    private func confirmed(_ what: String) async throws(CommandFailure) -> Bool {
        guard !yes else { return true }
        guard isatty(STDIN_FILENO) == 1 else {
            throw CommandFailure("would delete \(what); pass --yes to confirm without a terminal", status: .usage)
        }
        print("Delete \(what)? [y/N] ", terminator: "")
        guard let answer = await TerminalLine.read(), ["y", "yes"].contains(answer.lowercased()) else {
            print("nothing deleted")
            return false
        }
        return true
    }

    private func deleteEvent(_ id: String) async throws {
        guard try await confirmed("the event \(id)") else { return }
        _ = try await storeOptions.access(.existingOnly).send(DeleteEvent(app: ServiceTransport.app, id: id))
        print("deleted the event \(id)")
    }
}
