import HealthRequests
import ArgumentParser
import CommandSupport
import Foundation
import HRMConfiguration
import HealthModel
import HealthStore
import Ingest
import Logging
import Recordings
import SensorBackend
import SensorFrames
import HealthService
import HealthWire
import HTTPFront
import LiveFeed
import MQTTPublisher
import ServiceLifecycle
import SystemdSupport
import CentralSync

/// `hrmd`: records heart rate from chest straps into the shared health store.

struct HRMDaemon: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hrmd",
        abstract: "Record heart rate from chest straps into the shared health store.",
        discussion: """
            hrmd runs in the foreground (systemd runs it as a service). It reads Heart Rate
            Measurements from the sensors named with --sensor (or in the configuration
            file), tags each sample with the sensor's body location, and writes the
            samples to the store, but only the types its source "hrmd" is authorized to
            share. Until then it logs the command that grants them, for example:

              hrmctl auth grant hrmd heart-rate

            and starts storing within a second of the grant, without a restart. A revoke
            stops storage from the next write. SIGTERM or SIGINT writes what is pending
            and exits 0.

            SENSORS (--sensor SPEC, repeatable)
              mock[:key=value,…]       the built-in mock strap; keys: bpm (resting,
                                       30…220), hz (notifications per second), rr
                                       (on|off), location
                                       (other|chest|wrist|finger|hand|earLobe|foot),
                                       seed, id (device name, default mock-N),
                                       contact-loss (0…1)
              ble                      BLE straps through bluetoothd: the straps
                                       trusted or paired in BlueZ (bluetoothctl
                                       trust ADDRESS)
              ble:AA:BB:CC:DD:EE:FF    this strap only (repeatable); all ble specs
                                       share one connection to bluetoothd, each strap
                                       its own link, reconnected after a drop
              hci                      BLE straps straight through the kernel's HCI
                                       and L2CAP sockets, for machines without
                                       bluetoothd, on the first adapter: the straps
                                       the ble:ADDRESS specs list (then no BlueZ),
                                       or any with --any-strap. Needs CAP_NET_RAW
                                       and CAP_NET_ADMIN (the unit's hci drop-in,
                                       or setcap cap_net_raw,cap_net_admin+ep);
                                       brings a down adapter up. Never with
                                       bluetoothd running on that adapter
              hci:hci1                 the same on that adapter
              ant:/dev/ttyUSB0         ANT+ straps through the ANT USB stick on that
                                       tty (up to 8 straps, each its own device
                                       ant-<device number>; 115200 baud). ANT+ has no
                                       body location: set one under [locations]
              serial:/dev/ttyACM0[,baud=N]  a serial heart-rate sensor sending lines
                                       "HR <bpm> [RR <ms>…] [BATT <percent>]"
                                       (default 115200 baud); device serial-<tty>
              ant                      every ANT stick udev finds, now and when
                                       plugged in (HRMD_SENSOR=ant, or a Dynastream
                                       stick 0fcf:1008/1009/1004)
              serial                   every serial sensor udev marks
                                       HRMD_SENSOR=serial (baud from HRMD_BAUD)
              replay:FILE[,handle=H]   a recorded hrmd trace, FIT file or btsnoop
                                       capture, played at its recorded pace with its
                                       original timestamps; handle= names the Heart
                                       Rate Measurement handle of a capture without
                                       its GATT discovery (0x000e)
              A tty that is missing, busy or unplugged, and for hci no Bluetooth in
              the kernel, no adapter or missing capabilities, is a waiting state
              retried with backoff (1 s doubling to 60 s) until it works; it never
              stops hrmd.

            RECORDING
              --record DIR writes every raw frame and lifecycle event to hrmd-trace
              files (JSON Lines, the hrmd-trace format) named hrmd-<start time>.trace.jsonl, a new
              file every 64 MiB. A line is whole or absent; a full disk is logged and
              never stops ingest.
              "hrmctl replay FILE" or --sensor replay:FILE plays a recording back.

            STORE
              --store PATH, else $HRMD_STORE, else the configuration's "store", else
              /var/lib/hrmd/hrmd.sqlite. The file is created when missing (its directory
              is not).

            THE STORE SERVICE (--serve, or serve = yes; on in the installed unit)
              Also serves the store on the system bus as org.hrmd.Health (interface
              org.hrmd.Health1, /usr/share/dbus-1/interfaces/org.hrmd.Health1.xml):
              applications save and query samples as USER/APP, where USER is the login
              name of the uid the bus daemon verified; each needs the user's grant per
              type ("hrmctl auth requests" lists what they asked for). A reader without
              read authorization sees only its own samples. Managers (root, the service's
              user, and whoever polkit allows org.hrmd.health.manage: group hrmd by the
              shipped rules) grant, read every source, delete and import. The store's
              files are then created private to hrmd's user (umask 077). Without a
              system bus it waits for one; when another process owns the name it exits 69.

            THE HTTP FRONT (--http HOST:PORT, or [http]; off by default)
              Serves the store's requests as JSON under /api/v1/ (samples with paging,
              statistics, HRV, zones, changes, authorization), a live stream of new
              samples and sensor states (/api/v1/live: Server-Sent Events or a
              WebSocket), and the dashboard: / (tiles per strap; ?view=group for a TV),
              /overlay?device=ID (a stream overlay) and /day. Every request carries a
              token: "hrmctl auth token create USER/APP" makes one, and the token acts
              as that source with exactly its authorization. Loopback by default; a
              non-loopback address needs [http] certificate and key (TLS), or
              insecure = yes, which is logged as a warning at every start. The log
              says "http: listening on URL" once it listens (port 0 picks one).

            CONFIGURATION
              --config FILE, else /etc/hrmd/hrmd.conf when it exists. INI format:
                [hrmd]
                store = /var/lib/hrmd/hrmd.sqlite
                sensor = mock:bpm=70        (repeatable; --sensor flags replace these)
                any-strap = no              (yes: like --any-strap)
                serve = no                  (yes: like --serve)
                flush-interval = 0.5        (seconds between batched writes; 0.05 by
                                            default while the HTTP front is on)
                log-level = info
                [locations]
                AA:BB:CC:DD:EE:FF = chest   (wins over what the sensor reports)
                [http]
                listen = 127.0.0.1:8080     (like --http)
                certificate = /etc/hrmd/tls/cert.pem
                key = /etc/hrmd/tls/key.pem (both: TLS)
                insecure = no               (yes: plain HTTP off loopback)
                max-heart-rate = 190        (zone colours; or age = 40)
                [max-heart-rate]
                mock-2 = 175                (per device)
                [mqtt]
                broker = mqtt://127.0.0.1:1883  (live heart rate to MQTT and Home
                                            Assistant; docs/mqtt.md has every key)
                [sync]
                url = service=hrmd          (send what hrmctl auth lets hrmd/sync read
                                            to a central PostgreSQL store; gateway =
                                            NAME, default the host name;
                                            docs/central-store.md has every key)
              The parenthesised notes above are not part of the file: a comment is a
              line of its own starting with # or ;. An unknown key or a bad value is
              a start-up error naming the file, line and key.

            EXIT STATUS
              0 success, 64 usage error, 65 a damaged store (or a write-ahead log
              that belongs to another file) or an unreadable recording, 66 the
              configuration file, the store named or a recording missing, 69 a needed
              service or the system store is unavailable (or org.hrmd.Health is
              owned by another process), 73 the store cannot be
              created, 77 permission denied, 1 anything else.

            EXAMPLES
              hrmd --store ./hr.sqlite --sensor mock --duration 10
              hrmd --sensor mock:bpm=55,hz=4 --sensor mock:location=wrist,seed=7
              hrmd --sensor mock --record /var/lib/hrmd/traces
              hrmd --serve --store /var/lib/hrmd/hrmd.sqlite --sensor ble
              hrmd --store ./hr.sqlite --sensor mock --sensor mock:bpm=80 --http 127.0.0.1:8080
            """,
        version: HRMVersion.current
    )

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
        do {
            try await runDaemon()
        } catch let failure as CommandFailure {
            printError(failure.message, program: "hrmd")
            throw ExitCode(failure.status.rawValue)
        } catch let failure as HTTPFrontError {
            printError(failure.description, program: "hrmd")
            throw ExitCode(ExitStatus.usage.rawValue)
        } catch let failure as MQTTPublisherError {
            printError(failure.description, program: "hrmd")
            throw ExitCode(ExitStatus.usage.rawValue)
        } catch let failure as HealthServiceError {
            printError(failure.description, program: "hrmd")
            throw ExitCode(ExitStatus.unavailable.rawValue)
        }
    }

    private func runDaemon() async throws {
        let configuration = try ConfigurationFile.load(explicitPath: config)
        let level = Logger.Level(logLevel.flatMap(LogLevelName.init(rawValue:)) ?? configuration.logLevel)
        let toJournal = JournalLogHandler.stderrIsJournal
        LoggingSystem.bootstrap { label in
            if toJournal {
                var handler = JournalLogHandler(identifier: "hrmd")
                handler.logLevel = level
                return handler
            }
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "hrmd")

        let specs = try sensorSpecs.isEmpty ? configuration.sensors : sensorSpecs.map { try SensorSpec(parsing: $0) }
        guard !specs.isEmpty else {
            throw CommandFailure("no sensors to read: name one with --sensor (for example --sensor mock) or in the configuration file", status: .usage)
        }
        let admitsAnyStrap = anyStrap || configuration.anyStrap
        let plans = try SensorFactory.plans(for: specs, anyStrap: admitsAnyStrap, logger: logger)
        var recorder: TraceRecorder?
        if let record {
            if let problem = TraceRecorder.checkDirectory(record) {
                throw CommandFailure("cannot record: \(problem)", status: .cannotCreate)
            }
            recorder = TraceRecorder(directory: record, logger: logger)
        }

        let serving = serve || configuration.serve
        let location = StoreLocation(flag: store, configured: configuration.storePath)
        if serving {
            // The store service's files belong to the service alone.
            umask(0o077)
        }
        let healthStore = try location.open(.createIfMissing, pageCacheKiB: HealthStore.longRunningPageCacheKiB)
        if serving { StorePrivacy.tighten(storePath: location.path, logger: logger) }
        logger.info("store \(location.path)")

        let notifier = ServiceNotifier()
        let reporter = StatusReporter(notifier: notifier)
        reporter.setSensorCount(plans.count)
        let trimmer = HeapTrimmer()
        let pipeline = IngestPipeline(
            store: healthStore,
            settings: IngestSettings(
                source: HealthSource(name: "hrmd", version: HRMVersion.current),
                flushInterval: .milliseconds(Int(configuration.flushInterval(live: http != nil || configuration.http != nil || configuration.mqtt != nil) * 1000)),
                locationOverrides: Self.locations(configuration)),
            logger: logger,
            onTick: { counters in
                reporter.tick(counters)
                trimmer.tick()
            })
        let sink = FrameSink(
            { [inbox = pipeline.inbox, recorder] frame in
                inbox.submit(frame)
                recorder?.record(frame)
            },
            status: { [inbox = pipeline.inbox] status in inbox.report(status) })
        let supervisor = SensorSupervisor(initial: plans, sink: sink, logger: logger)
        let reload: @Sendable () async -> Void = { [config, sensorSpecs, anyStrap, inbox = pipeline.inbox] in
            do {
                let reloaded = try ConfigurationFile.load(explicitPath: config)
                inbox.updateLocationOverrides(Self.locations(reloaded))
                if sensorSpecs.isEmpty {
                    let plans = try SensorFactory.plans(for: reloaded.sensors, anyStrap: anyStrap || reloaded.anyStrap, logger: logger)
                    supervisor.update(plans)
                    reporter.setSensorCount(plans.count)
                }
                if reloaded.storePath != configuration.storePath {
                    logger.warning("the store path changed in the configuration; it takes effect on restart")
                }
                logger.notice("configuration reloaded")
            } catch {
                logger.error("reload failed, the running configuration stays: \(error)")
            }
        }

        // Services start in this order; graceful shutdown runs in reverse: the lifecycle
        // service says STOPPING=1, sensors stop, the recorder drains, the pipeline drains and
        // flushes.
        var services: [ServiceGroupConfiguration.ServiceConfiguration] = []
        // The sync starts first so that it stops last: after the pipeline's final flush, which
        // it then sends too.
        if let sync = configuration.sync, let url = sync.url {
            services.append(.init(service: SyncService(
                settings: SyncSettings(
                    connectionString: url, gateway: sync.gateway ?? GatewayName.ofThisHost(), batchSize: sync.batchSize,
                    timeout: .milliseconds(Int(sync.timeoutSeconds * 1000)),
                    retryMaximum: .milliseconds(Int(sync.retryMaximumSeconds * 1000))),
                store: healthStore, logger: Logger(label: "hrmd.sync"))))
        }
        services.append(.init(service: pipeline))
        if serving {
            let serviceLogger = Logger(label: "hrmd.service")
            services.append(.init(service: HealthService(
                store: healthStore, version: HRMVersion.current,
                imports: DaemonRecordingImports(
                    store: healthStore, source: HealthSource(name: HealthBus.daemonSource, version: HRMVersion.current),
                    logger: serviceLogger),
                logger: serviceLogger)))
        }
        for service in try Self.liveServices(httpFlag: http, configuration: configuration, store: healthStore) {
            services.append(.init(service: service))
        }
        if let recorder { services.append(.init(service: RecorderService(recorder: recorder))) }
        services.append(.init(service: supervisor))
        if let duration {
            services.append(.init(service: RunLimit(duration: .seconds(duration)), successTerminationBehavior: .gracefullyShutdownGroup))
        }
        services.append(.init(service: LifecycleService(notifier: notifier, status: { reporter.line }, reload: reload, logger: logger)))
        var groupConfiguration = ServiceGroupConfiguration(services: services, logger: logger)
        groupConfiguration.gracefulShutdownSignals = [.sigterm, .sigint]
        logger.info("hrmd \(HRMVersion.current) started with \(specs.count) sensor(s): \(specs.map(\.description).joined(separator: " "))")
        try await ServiceGroup(configuration: groupConfiguration).run()
    }

    private static func locations(_ configuration: DaemonConfiguration) -> [SensorID: HeartRateSensorLocation] {
        configuration.locations.compactMapValues { HeartRateSensorLocation(rawValue: Int($0.rawValue)) }
    }
}

extension Logger.Level {
    init(_ name: LogLevelName) {
        switch name {
        case .trace: self = .trace
        case .debug: self = .debug
        case .info: self = .info
        case .notice: self = .notice
        case .warning: self = .warning
        case .error: self = .error
        case .critical: self = .critical
        }
    }
}
