import ArgumentParser
import StoreTransport
import HealthModel
import CommandSupport
import HealthStore

/// `hrmctl`: grant authorization, read, decode and inspect what hrmd stores.

struct HRMCtl: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hrmctl",
        abstract: "Inspect and manage the heart-rate store that hrmd writes.",
        discussion: """
            Where the data comes from: by default the hrmd store service on the system bus
            (org.hrmd.Health, served by hrmd --serve), which checks who is asking, as
            HealthKit's store does; reading everyone's samples, answering authorization
            requests, devices, sources, deleting another source's samples and replays need
            a manager of the store (root, a member of group hrmd, or whom polkit allows
            org.hrmd.health.manage). With --store PATH, else $HRMD_STORE, hrmctl opens that
            store file directly instead (a file of your own: demos, tests, replays).
            With --store postgresql://…, postgres://… or service=NAME (any libpq URI or
            service), hrmctl reads the central store that gateways sync into: samples,
            stats, export, sources, devices and watch, as from a file, each sample with the
            gateway that sent it; it writes nothing there (auth, token, delete and replay
            are exit 64). An unreachable database is exit 69.

            EXIT STATUS
              0 success (also for an empty range), 64 usage error (bad flag, unknown
              type or incompatible unit), 65 malformed input data, 66 the store file or
              an input file is missing, 69 the store service is not running (or the
              central store cannot be reached), 73 the store
              cannot be created, 77 permission denied (or not a manager of the store),
              1 anything else.

            EXAMPLES
              hrmctl auth grant hrmd heart-rate
              hrmctl auth requests
              hrmctl samples --since 15m
              hrmctl samples --since 2026-11-20T10:00:00Z --unit count/s --output json
              hrmctl samples --store demo.sqlite --output json   (a file of your own)
              hrmctl decode 164a0004
            """,
        version: HRMVersion.current,
        subcommands: [
            AuthCommand.self, SamplesCommand.self, StatsCommand.self, ExportCommand.self, DevicesCommand.self,
            SourcesCommand.self, PersonCommand.self, WorkoutCommand.self, EventsCommand.self, EcgCommand.self, WatchCommand.self, NotifyCommand.self, PlotCommand.self, DeleteCommand.self, ReplayCommand.self,
            DecodeCommand.self, TypesCommand.self,
        ]
    )
}

/// The options every subcommand that reads or writes the store takes: the store service
/// by default, a file with --store or $HRMD_STORE.
struct StoreOptions: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp(
            "Open this store file directly, or read the central store in PostgreSQL (postgresql://…, postgres://… or service=NAME; read-only, samples show their gateway) (default $HRMD_STORE; with neither, ask the hrmd store service on the system bus).",
            valueName: "path|uri"))
    var store: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "The configuration file: checked (an error in it is exit 64), but it no longer chooses the store (its store is the service's); replay finds events by its [alerts] (default /etc/hrmd/hrmd.conf when it exists).",
            valueName: "file"))
    var config: String?

    /// The store file --store or $HRMD_STORE names (not explicit when neither does); a
    /// --config file is still checked.
    var location: StoreLocation {
        get throws(CommandFailure) {
            if let config { _ = try ConfigurationFile.load(explicitPath: config) }
            return StoreLocation(flag: store)
        }
    }

    /// Whether the store service answers, rather than a file.
    var usesService: Bool {
        get throws(CommandFailure) { try !location.isExplicit }
    }

    /// The store to use: the named file (opened with `mode`; for reading only unless a
    /// subcommand writes), else the store service.
    func access(_ mode: HealthStore.OpenMode = .readOnly) throws(CommandFailure) -> any RequestTransport {
        let location = try location
        guard location.isExplicit else { return try ServiceTransport.system(app: "hrmctl") }
        if let conninfo = location.centralConninfo { return try CentralTransport.connect(conninfo) }
        return FileTransport(store: try location.open(mode))
    }
}

/// How a subcommand prints its results.
enum OutputFormat: String, ExpressibleByArgument, CaseIterable {
    case table, json, csv
}

/// Runs a subcommand body, turning a `CommandFailure` into one line on stderr and its exit
/// status.
func reportingFailures(_ body: () async throws -> Void) async throws {
    do {
        try await body()
    } catch let failure as CommandFailure {
        throw reported(failure)
    }
}

/// The same for a subcommand that needs no store and awaits nothing (decode).
func reportingFailures(_ body: () throws -> Void) throws {
    do {
        try body()
    } catch let failure as CommandFailure {
        throw reported(failure)
    }
}

/// Prints `failure`'s line on stderr; returns the exit status to throw.
private func reported(_ failure: CommandFailure) -> ExitCode {
    printError(failure.message, program: "hrmctl")
    return ExitCode(failure.status.rawValue)
}
