import ArgumentParser
import CLISupport

/// `hrmctl`: grant authorization, read, decode and inspect what hrmd stores.

struct HRMCtl: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hrmctl",
        abstract: "Inspect and manage the heart-rate store that hrmd writes.",
        discussion: """
            The store is --store PATH, else $HRMD_STORE, else /var/lib/hrmd/hrmd.sqlite.

            EXIT STATUS
              0 success (also for an empty range), 64 usage error (bad flag, unknown type or
              incompatible unit), 65 malformed input data, 66 the store or an input file is
              missing, 69 the system store is unavailable, 73 the store cannot be created,
              77 permission denied, 1 anything else.

            EXAMPLES
              hrmctl auth grant hrmd heart-rate
              hrmctl samples --since 15m
              hrmctl samples --since 2026-11-20T10:00:00Z --unit count/s --output json
              hrmctl decode 164a0004
            """,
        version: HRMVersion.current,
        subcommands: [AuthCommand.self, SamplesCommand.self, DecodeCommand.self, TypesCommand.self]
    )
}

/// The store option every subcommand that reads or writes the store takes.
struct StoreOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("The store file (default $HRMD_STORE, else /var/lib/hrmd/hrmd.sqlite).", valueName: "path"))
    var store: String?

    var location: StoreLocation { StoreLocation(flag: store) }
}

/// How a subcommand prints its results.
enum OutputFormat: String, ExpressibleByArgument, CaseIterable {
    case table, json, csv
}

/// Runs a subcommand body, turning a `CommandFailure` into one line on stderr and its exit
/// status.
func reportingFailures(_ body: () throws -> Void) throws {
    do {
        try body()
    } catch let failure as CommandFailure {
        printError(failure.message, program: "hrmctl")
        throw ExitCode(failure.status.rawValue)
    }
}
