import CentralSync
import CommandSupport
import Glibc
import HRMConfiguration
import HealthModel
import HealthService
import HealthStore
import HealthWire
import HeartRateEvents
import Ingest
import Logging
import PostgresClient
import Recordings
import SensorBackend
import SensorFrames
import ServiceLifecycle
import SystemdSupport

/// hrmd's services, assembled from its command line and its configuration file: each one that
/// runs, at its stage. The list is in no particular order; the stages order the start (and,
/// in reverse, the graceful shutdown).
struct DaemonAssembly {
    /// The services that run.
    let services: [DaemonService]
    private let logger: Logger
    /// What the log says when the services start.
    private let startLine: String

    /// Reads the configuration, opens the store and sets every service up; throws what stops
    /// hrmd before anything runs.
    init(_ command: HRMDaemon) throws {
        let configuration = try ConfigurationFile.load(explicitPath: command.config)
        let logger = DaemonLogging.bootstrap(level: command.logLevel.flatMap(LogLevelName.init(rawValue:)) ?? configuration.logLevel)

        let specs = try command.sensorSpecs.isEmpty ? configuration.sensors : command.sensorSpecs.map { try SensorSpec(parsing: $0) }
        guard !specs.isEmpty else {
            throw CommandFailure("no sensors to read: name one with --sensor (for example --sensor mock) or in the configuration file", status: .usage)
        }
        let plans = try SensorFactory.plans(for: specs, anyStrap: command.anyStrap || configuration.anyStrap, logger: logger)
        let recorder = try command.record.map { directory throws(CommandFailure) in
            if let problem = TraceRecorder.checkDirectory(directory) {
                throw CommandFailure("cannot record: \(problem)", status: .cannotCreate)
            }
            return TraceRecorder(directory: directory, logger: logger)
        }

        let serving = command.serve || configuration.serve
        let location = StoreLocation(flag: command.store, configured: configuration.storePath)
        let store = try location.open(.createIfMissing, pageCacheKiB: HealthStore.longRunningPageCacheKiB)
        if serving { StorePrivacy.tighten(storePath: location.path, logger: logger) }
        logger.info("store \(location.path)")

        let notifier = ServiceNotifier()
        let reporter = StatusReporter(notifier: notifier)
        reporter.setSensorCount(plans.count)
        let trimmer = HeapTrimmer()
        let pipeline = IngestPipeline(
            store: store,
            settings: IngestSettings(
                source: HealthSource(name: "hrmd", version: HRMVersion.current),
                flushInterval: .milliseconds(Int(configuration.flushInterval(
                    live: command.http != nil || configuration.http != nil || configuration.mqtt != nil) * 1000)),
                locationOverrides: Self.locations(configuration), alerts: configuration.alerts,
                recordsWaveforms: specs.contains(where: \.streamsWaveforms)),
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
        let sensors = SensorSupervisor(initial: plans, sink: sink, logger: logger)
        let reload = Self.reload(
            command: command, running: configuration, inbox: pipeline.inbox, sensors: sensors, reporter: reporter, logger: logger)
        let live = try LiveServices(httpFlag: command.http, configuration: configuration, store: store)

        services = [
            try Self.sync(configuration.sync, store: store).map { DaemonService($0, at: .sync) },
            DaemonService(pipeline, at: .ingest),
            serving ? DaemonService(Self.storeService(store, alerts: configuration.alerts), at: .storeService) : nil,
            live.feed.map { DaemonService($0, at: .liveFeed) },
            live.front.map { DaemonService($0, at: .httpFront) },
            live.publisher.map { DaemonService($0, at: .mqttPublisher) },
            recorder.map { DaemonService(RecorderService(recorder: $0), at: .recorder) },
            DaemonService(sensors, at: .sensors),
            command.duration.map { DaemonService(RunLimit(duration: .seconds($0)), at: .runLimit, endsTheRun: true) },
            DaemonService(
                LifecycleService(notifier: notifier, status: { reporter.line }, reload: reload, logger: logger), at: .lifecycle),
        ].compactMap { $0 }
        self.logger = logger
        startLine = "hrmd \(HRMVersion.current) started with \(specs.count) sensor(s): \(specs.map(\.description).joined(separator: " "))"
    }

    /// Runs the services until they end or SIGTERM or SIGINT shuts them down gracefully.
    func run() async throws {
        let ordered = services.sorted { $0.stage < $1.stage }.map(\.configuration)
        var group = ServiceGroupConfiguration(services: ordered, logger: logger)
        group.gracefulShutdownSignals = [.sigterm, .sigint]
        logger.info("\(startLine)")
        try await ServiceGroup(configuration: group).run()
    }

    /// The central sync, when `[sync]` names a store; its url read as libpq reads it, and
    /// refused (exit 64) when libpq cannot read it or would take a password from it.
    private static func sync(_ section: SyncConfiguration?, store: HealthStore) throws(CommandFailure) -> SyncService? {
        guard let section, let url = section.url else { return nil }
        let parsed: ConnectionString
        do {
            parsed = try ConnectionString(url)
        } catch {
            throw CommandFailure("[sync] url: \(error)", status: .usage)
        }
        guard !parsed.holdsPassword else {
            throw CommandFailure(
                "[sync] url holds a password: keep it out of the configuration (a passfile, a service file or PGPASSWORD in the unit's environment)",
                status: .usage)
        }
        return SyncService(
            settings: SyncSettings(
                connectionString: url, gateway: section.gateway ?? GatewayName.ofThisHost(), batchSize: section.batchSize,
                timeout: .milliseconds(Int(section.timeoutSeconds * 1000)),
                retryMaximum: .milliseconds(Int(section.retryMaximumSeconds * 1000))),
            store: store, logger: Logger(label: "hrmd.sync"))
    }

    /// The store service on the system bus, whose imports go through hrmd's own ingest.
    private static func storeService(_ store: HealthStore, alerts: AlertRules) -> HealthService {
        let logger = Logger(label: "hrmd.service")
        return HealthService(
            store: store, version: HRMVersion.current,
            imports: DaemonRecordingImports(
                store: store, source: HealthSource(name: HealthBus.daemonSource, version: HRMVersion.current), alerts: alerts, logger: logger),
            logger: logger)
    }

    /// What SIGHUP does: reads the configuration again and applies what may change while
    /// running (locations; the sensors, unless the command line names them).
    private static func reload(
        command: HRMDaemon, running configuration: DaemonConfiguration, inbox: FrameInbox, sensors: SensorSupervisor,
        reporter: StatusReporter, logger: Logger
    ) -> @Sendable () async -> Void {
        { [config = command.config, sensorSpecs = command.sensorSpecs, anyStrap = command.anyStrap] in
            do {
                let reloaded = try ConfigurationFile.load(explicitPath: config)
                inbox.updateLocationOverrides(Self.locations(reloaded))
                if sensorSpecs.isEmpty {
                    let plans = try SensorFactory.plans(for: reloaded.sensors, anyStrap: anyStrap || reloaded.anyStrap, logger: logger)
                    sensors.update(plans)
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
    }

    private static func locations(_ configuration: DaemonConfiguration) -> [SensorID: HeartRateSensorLocation] {
        configuration.locations.compactMapValues { HeartRateSensorLocation(rawValue: Int($0.rawValue)) }
    }
}

/// Where a service stands in hrmd's start order, first to last. Graceful shutdown runs in
/// reverse: the lifecycle service says STOPPING=1, the sensors stop, the recorder drains, the
/// readers and the store service stop, the pipeline drains and flushes, and the sync stops last.
enum ServiceStage: Int, Comparable {
    /// The central sync: stops after the pipeline's final flush, which it then sends too.
    case sync
    /// The ingest pipeline: drains and flushes once nothing sends it frames any more.
    case ingest
    /// The store service on the system bus.
    case storeService
    /// The live feed, before the readers it serves.
    case liveFeed
    case httpFront
    case mqttPublisher
    /// The trace recorder: writes what is queued once the sensors stopped.
    case recorder
    case sensors
    /// The end of `--duration`.
    case runLimit
    /// Readiness, SIGHUP and STOPPING=1: starts once everything else runs.
    case lifecycle

    static func < (lhs: ServiceStage, rhs: ServiceStage) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// One of hrmd's services, at its stage.
struct DaemonService {
    let stage: ServiceStage
    let configuration: ServiceGroupConfiguration.ServiceConfiguration

    /// `endsTheRun`: when the service returns, the whole group shuts down gracefully. The group's
    /// log lines name the service by its stage: the group would otherwise print the whole value,
    /// settings and all.
    init(_ service: any Service, at stage: ServiceStage, endsTheRun: Bool = false) {
        self.stage = stage
        configuration = .init(
            service: service, successTerminationBehavior: endsTheRun ? .gracefullyShutdownGroup : .cancelGroup,
            failureTerminationBehavior: .cancelGroup, serviceName: "\(stage)")
    }
}
