@preconcurrency import Glibc
import ArgumentParser
import StoreTransport
import HealthModel
import CommandSupport
import HealthStore
import Timestamps

/// `hrmctl delete`: one source's samples over a range, leaving tombstones.
struct DeleteCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "delete",
        abstract: "Delete one source's samples of a type over a range.",
        discussion: """
            As in HealthKit, a source's samples are deleted as that source: other sources'
            samples are never touched. Through the store service (the default), deleting
            another source's samples needs a manager of the store. Deletions leave tombstones, so programs that follow
            the store's changes see them. Asks for confirmation on a terminal unless --yes;
            without a terminal, --yes is required.

            EXAMPLES
              hrmctl delete --source hrmd --since 2026-11-20T10:00:00Z --until 2026-11-20T11:00:00Z
              hrmctl delete --source hrmd --type rr-interval --yes
            """)

    @OptionGroup var storeOptions: StoreOptions
    @OptionGroup var range: RangeOptions
    @Option(help: ArgumentHelp("The source whose samples go (see hrmctl sources).", valueName: "name")) var source: String
    @Flag(help: "Do not ask for confirmation.") var yes = false

    func validate() throws { _ = try range.resolved() }

    func run() async throws {
        try await reportingFailures {
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
            if !yes {
                guard isatty(STDIN_FILENO) == 1 else {
                    throw CommandFailure("would delete \(what); pass --yes to confirm without a terminal", status: .usage)
                }
                print("Delete \(what)? [y/N] ", terminator: "")
                guard let answer = await TerminalLine.read(), ["y", "yes"].contains(answer.lowercased()) else {
                    print("nothing deleted")
                    return
                }
            }
            let deleted = try await store.deleteSamples(of: query.type, source: source, since: query.since, until: query.until)
            print("deleted \(deleted) \(query.type.identifier) samples of \(source)")
        }
    }
}
