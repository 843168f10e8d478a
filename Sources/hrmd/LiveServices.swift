import CommandSupport
import HRMConfiguration
import HTTPFront
import HealthModel
import HealthStore
import LiveFeed
import Logging
import MQTTPublisher

/// The live feed and its readers: the HTTP front (`--http` or `[http]`) and the MQTT publisher
/// (`[mqtt]`). One feed serves both and follows the types either reads; none when neither is on.
struct LiveServices {
    var feed: LiveFeed?
    var front: HTTPFront?
    var publisher: MQTTPublisherService?

    /// Sets up what `--http` and the configuration ask for; throws when their settings are wrong.
    init(httpFlag: String?, configuration: DaemonConfiguration, store: HealthStore) throws {
        let front = Self.httpSettings(flag: httpFlag, configuration: configuration)
        let mqtt = try configuration.mqtt.map { section throws(MQTTPublisherError) in try Self.mqttSettings(section) }
        guard front != nil || mqtt != nil else { return }
        var types: [SampleType] = front == nil ? [] : HTTPFront.liveTypes
        for type in mqtt?.types ?? [] where !types.contains(type) { types.append(type) }
        let feed = LiveFeed(store: store, types: types, logger: Logger(label: "hrmd.live"))
        self.feed = feed
        if let front {
            self.front = try HTTPFront(settings: front, store: store, feed: feed, logger: Logger(label: "hrmd.http"))
        }
        if let mqtt {
            publisher = try MQTTPublisherService(settings: mqtt, store: store, feed: feed, logger: Logger(label: "hrmd.mqtt"))
        }
    }

    /// The HTTP front's settings, when --http or [http] asks for it.
    private static func httpSettings(flag: String?, configuration: DaemonConfiguration) -> HTTPSettings? {
        guard flag != nil || configuration.http != nil else { return nil }
        let section = configuration.http ?? HTTPConfiguration()
        let address = flag.flatMap(HTTPAddress.init) ?? section.address
        var settings = HTTPSettings(host: address.host, port: address.port)
        settings.certificate = section.certificate
        settings.privateKey = section.key
        settings.insecure = section.insecure
        settings.webDirectory = section.webDirectory ?? HTTPSettings.defaultWebDirectory(executable: CommandLine.arguments[0])
        settings.maxHeartRate = section.maxHeartRate
        settings.deviceMaxHeartRates = configuration.deviceMaxHeartRates
        settings.maxConnections = section.maxConnections
        settings.maxConnectionsPerAddress = min(section.maxConnectionsPerAddress, section.maxConnections)
        settings.maxLiveStreams = section.maxLiveStreams
        settings.idleTimeoutSeconds = Int64(section.idleTimeoutSeconds)
        return settings
    }

    /// The MQTT publisher's settings from [mqtt], with the password read from its file.
    private static func mqttSettings(_ section: MQTTConfiguration) throws(MQTTPublisherError) -> MQTTSettings {
        guard let broker = section.broker else { throw MQTTPublisherError("mqtt: [mqtt] needs broker = mqtt://HOST:PORT") }
        let gateway = section.gateway ?? GatewayName.ofThisHost()
        var options = MosquittoOptions(host: broker.host, port: broker.port, clientID: section.clientID ?? "hrmd-\(gateway)")
        options.username = section.username
        if let file = section.passwordFile { options.password = try MQTTSettings.readPassword(file: file) }
        if broker.usesTLS { options.tls = section.caFile.map { .file($0) } ?? .system }
        let layout = MQTTLayout(
            topicPrefix: section.topicPrefix, discoveryPrefix: section.discoveryPrefix, gateway: gateway,
            publishesRRIntervals: section.publishesRRIntervals, version: HRMVersion.current)
        var settings = MQTTSettings(connection: options, layout: layout, brokerName: broker.description)
        settings.publishesDiscovery = section.publishesDiscovery
        return settings
    }
}
