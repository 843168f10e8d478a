import ArgumentParser
import CommandSupport
import Glibc
import HRMConfiguration

/// `hrmd`: records heart rate from chest straps into the shared health store. Its help, and
/// so its man page, is `configuration` (DaemonHelp.swift) and the options' own help; what
/// runs is `DaemonAssembly`'s list of services; how it fails is `DaemonFailure`.
struct HRMDaemon: AsyncParsableCommand {
    @Option(name: .long, help: ArgumentHelp("The store file.", valueName: "path"))
    var store: String?

    @Option(name: .long, help: ArgumentHelp("The configuration file (default /etc/hrmd/hrmd.conf if it exists).", valueName: "file"))
    var config: String?

    @Option(name: .customLong("sensor"), help: ArgumentHelp("A sensor to read; repeatable (see SENSORS).", valueName: "spec"))
    var sensorSpecs: [String] = []

    @Option(name: .long, help: ArgumentHelp("Stop cleanly after this many seconds.", valueName: "seconds"))
    var duration: Double?

    @Flag(
        name: .long,
        help: ArgumentHelp(
            "Admit any BLE strap advertising the Heart Rate service, not only listed, trusted or paired ones.",
            discussion: "Off by default, so a neighbour's strap is never recorded. Also 'any-strap = yes' in the configuration."))
    var anyStrap = false

    @Flag(
        name: .long,
        help: ArgumentHelp(
            "Also serve the store on the system bus as org.hrmd.Health (see THE STORE SERVICE).",
            discussion: "Also 'serve = yes' in the configuration."))
    var serve = false

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Also serve the HTTP front (API, live stream, dashboard) on this address (see THE HTTP FRONT).",
            discussion: "Also [http] listen = HOST:PORT in the configuration. Port 0 picks a free one.",
            valueName: "host:port"))
    var http: String?

    @Option(name: .long, help: ArgumentHelp("trace, debug, info, notice, warning, error or critical.", valueName: "level"))
    var logLevel: String?

    @Option(name: .long, help: ArgumentHelp("Also write every raw frame to hrmd-trace files in this directory.", valueName: "dir"))
    var record: String?

    func validate() throws {
        for spec in sensorSpecs {
            do { _ = try SensorSpec(parsing: spec) } catch { throw ValidationError("\(error)") }
        }
        if let duration, !(duration > 0 && duration.isFinite) {
            throw ValidationError("--duration must be a positive number of seconds")
        }
        if let http, HTTPAddress(http) == nil {
            throw ValidationError("--http takes HOST:PORT, such as 127.0.0.1:8080 or [::1]:8080")
        }
        if let logLevel, LogLevelName(rawValue: logLevel) == nil {
            throw ValidationError("--log-level must be one of \(LogLevelName.allCases.map(\.rawValue).joined(separator: ", "))")
        }
    }

    func run() async throws {
        // Everything hrmd creates (the store, traces, exports of its own) is its user's alone.
        umask(0o077)
        do {
            try await DaemonAssembly(self).run()
        } catch {
            guard let failure = DaemonFailure(error) else { throw error }
            printError(failure.message, program: "hrmd")
            throw ExitCode(failure.status.rawValue)
        }
    }
}
