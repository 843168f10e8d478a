import HeartRateEvents
import SensorFrames

/// What `hrmd.conf` says. Command-line flags override it (see `hrmd --help`).
///
/// ```ini
/// [hrmd]
/// store = /var/lib/hrmd/hrmd.sqlite
/// sensor = ble
/// sensor = mock:bpm=70
/// any-strap = no
/// serve = yes
/// flush-interval = 0.5
/// log-level = info
///
/// [locations]
/// AA:BB:CC:DD:EE:FF = chest
/// mock-2 = wrist
///
/// [mqtt]
/// broker = mqtt://127.0.0.1:1883
///
/// [sync]
/// url = service=hrmd
///
/// [alerts]
/// high = 120
/// high-for = 10m
/// ```
public struct DaemonConfiguration: Sendable, Equatable {
    /// The store file; nil leaves the choice to the flag, the environment or the default.
    public var storePath: String?
    /// Sensors to run, in order (`sensor =` may repeat).
    public var sensors: [SensorSpec] = []
    /// Admit any heart-rate strap, not only trusted ones.
    public var anyStrap = false
    /// Also serve the store on the system bus (`org.hrmd.Health`).
    public var serve = false
    /// Seconds between batched writes, as the file sets them; nil: ``defaultFlushInterval``,
    /// or ``liveFlushInterval`` while something shows samples live.
    public var configuredFlushInterval: Double?
    /// Seconds between batched writes when nothing shows samples live.
    public static let defaultFlushInterval = 0.5
    /// Seconds between batched writes while the HTTP front or the MQTT publisher shows samples
    /// live: a sample reaches a browser or a broker within about this much of its notification.
    public static let liveFlushInterval = 0.05

    /// Seconds between batched writes: the file's, else the default for whether samples are
    /// shown live.
    public func flushInterval(live: Bool) -> Double {
        configuredFlushInterval ?? (live ? Self.liveFlushInterval : Self.defaultFlushInterval)
    }
    /// The least severe log level printed.
    public var logLevel: LogLevelName = .info
    /// Body locations that win over what a sensor reports, by device identifier.
    public var locations: [SensorID: BodySensorLocation] = [:]
    /// The HTTP front (`[http]`); nil: off.
    public var http: HTTPConfiguration?
    /// The MQTT publisher (`[mqtt]`); nil: off.
    public var mqtt: MQTTConfiguration?
    /// The sync into a central PostgreSQL store (`[sync]`); nil: off.
    public var sync: SyncConfiguration?
    /// Maximum heart rates by device identifier (`[max-heart-rate]`), for zones.
    public var deviceMaxHeartRates: [String: Double] = [:]
    /// When heart rate, contact and battery become events (`[alerts]`); the defaults without it.
    public var alerts = AlertRules.defaults

    public init() {}

    /// The configuration described by `text`; `file` names it in errors. An unknown section
    /// or key, or a bad value, is an error naming the file, the line and the key.
    public init(text: String, file: String) throws(ConfigurationError) {
        let document = try INIDocument(text: text, file: file)
        var mqttLine = 0
        var syncLine = 0
        // The later of `high` and `low` in [alerts], which an error about the two names.
        var alertsLimit: (line: Int, key: String)?
        for entry in document.entries {
            func invalid(_ message: String) -> ConfigurationError {
                .invalidLine(file: file, line: entry.line, key: entry.key, message: message)
            }
            switch (entry.section, entry.key) {
            case ("hrmd", "store"):
                guard entry.value.hasPrefix("/") else { throw invalid("the store must be an absolute path") }
                storePath = entry.value
            case ("hrmd", "sensor"):
                do {
                    sensors.append(try SensorSpec(parsing: entry.value))
                } catch {
                    if case .invalidSensor(_, let message) = error { throw invalid(message) }
                    throw error
                }
            case ("hrmd", "any-strap"):
                guard let flag = Bool(configurationValue: entry.value) else { throw invalid("expected yes or no") }
                anyStrap = flag
            case ("hrmd", "serve"):
                guard let flag = Bool(configurationValue: entry.value) else { throw invalid("expected yes or no") }
                serve = flag
            case ("hrmd", "flush-interval"):
                guard let seconds = Double(entry.value), seconds >= 0.05, seconds <= 60 else {
                    throw invalid("expected seconds between 0.05 and 60")
                }
                configuredFlushInterval = seconds
            case ("hrmd", "log-level"):
                guard let level = LogLevelName(rawValue: entry.value) else {
                    throw invalid("expected one of \(LogLevelName.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                logLevel = level
            case ("locations", _):
                guard let location = BodySensorLocation(name: entry.value) else {
                    throw invalid("expected one of \(BodySensorLocation.allCases.map(\.name).joined(separator: ", "))")
                }
                let device = BLEAddress.isValid(entry.key) ? entry.key.uppercased() : entry.key
                locations[SensorID(device)] = location
            case ("http", _):
                var section = http ?? HTTPConfiguration()
                try section.set(entry.key, entry.value, invalid: invalid)
                http = section
            case ("mqtt", _):
                var section = mqtt ?? MQTTConfiguration()
                if mqtt == nil { mqttLine = entry.line }
                try section.set(entry.key, entry.value, line: entry.line, invalid: invalid)
                mqtt = section
            case ("sync", _):
                var section = sync ?? SyncConfiguration()
                if sync == nil { syncLine = entry.line }
                try section.set(entry.key, entry.value, invalid: invalid)
                sync = section
            case ("alerts", _):
                try alerts.set(entry.key, entry.value, invalid: invalid)
                if entry.key == "high" || entry.key == "low" { alertsLimit = (entry.line, entry.key) }
            case ("max-heart-rate", _):
                guard let bpm = Double(entry.value), (100...250).contains(bpm) else { throw invalid("expected a maximum heart rate of 100…250 count/min") }
                deviceMaxHeartRates[entry.key] = bpm
            case ("", _):
                throw invalid("keys belong in a section such as [hrmd]")
            case ("hrmd", _):
                throw invalid("unknown key (known: store, sensor, any-strap, serve, flush-interval, log-level)")
            default:
                throw invalid("unknown section [\(entry.section)] (known: [hrmd], [locations], [http], [mqtt], [sync], [max-heart-rate], [alerts])")
            }
        }
        try mqtt?.check(file: file, sectionLine: mqttLine)
        try sync?.check(file: file, sectionLine: syncLine)
        if let alertsLimit { try alerts.checkTogether(file: file, line: alertsLimit.line, key: alertsLimit.key) }
    }
}

/// Log levels as written in configuration and on the command line.
public enum LogLevelName: String, Sendable, CaseIterable {
    case trace, debug, info, notice, warning, error, critical
}
