import ArgumentParser
import CLISupport

/// `hrmctl`: grant authorization, read, decode and inspect what hrmd stores.

struct HRMCtl: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hrmctl",
        abstract: "Inspect and manage the heart-rate store that hrmd writes.",
        discussion: """
            The store is --store PATH, else $HRMD_STORE, else the "store" of the
            configuration file (--config FILE, else /etc/hrmd/hrmd.conf when it exists),
            else /var/lib/hrmd/hrmd.sqlite.

            EXIT STATUS
              0 success (also for an empty range), 64 usage error (bad flag, unknown
              type or incompatible unit), 65 malformed input data, 66 the store or an
              input file is missing, 69 the system store is unavailable, 73 the store
              cannot be created, 77 permission denied, 1 anything else.

            EXAMPLES
              hrmctl auth grant hrmd heart-rate
              hrmctl samples --since 15m
              hrmctl samples --since 2026-11-20T10:00:00Z --unit count/s --output json
              hrmctl decode 164a0004
            """,
        version: HRMVersion.current,
        subcommands: [
            AuthCommand.self, SamplesCommand.self, StatsCommand.self, ExportCommand.self, DevicesCommand.self,
            SourcesCommand.self, WatchCommand.self, PlotCommand.self, DeleteCommand.self, ReplayCommand.self,
            DecodeCommand.self, TypesCommand.self,
        ]
    )
}

/// The options every subcommand that reads or writes the store takes.
struct StoreOptions: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp(
            "The store file (default $HRMD_STORE, else the configuration's store, else /var/lib/hrmd/hrmd.sqlite).",
            valueName: "path"))
    var store: String?

    @Option(name: .long, help: ArgumentHelp("The configuration file (default /etc/hrmd/hrmd.conf if it exists).", valueName: "file"))
    var config: String?

    /// Where the store is; the configuration file is read only when neither --store nor
    /// $HRMD_STORE names it.
    var location: StoreLocation {
        get throws(CommandFailure) {
            let named = StoreLocation(flag: store)
            guard !named.isExplicit else { return named }
            return StoreLocation(flag: nil, configured: try ConfigurationFile.load(explicitPath: config).storePath)
        }
    }
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
