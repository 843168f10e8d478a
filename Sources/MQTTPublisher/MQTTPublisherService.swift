import HealthModel
import HealthRequests
import HealthStore
import LiveFeed
import Logging
import ServiceLifecycle
import Timestamps

/// hrmd's MQTT publisher, one more service in its group: a reader of the live feed as the
/// source `hrmd/mqtt`, so it publishes only what that source may read, and a client of one
/// broker. Each strap's heart rate (and battery, contact, RR intervals when asked) goes to its
/// state topics, whether it has an open event of each type (a Home Assistant problem sensor,
/// with the event as its attributes) to its event topics, and each person's (or unworn
/// strap's) workout state to its own; discovery documents go out when a strap or owner is
/// first seen and after each reconnect; the
/// gateway's status is `online` while connected, and `offline` as the last will.
///
/// A broker that is down, slow or refusing costs nothing but the messages: hrmd records as
/// before, the publisher says so once per change, reconnects with back-off on its own thread,
/// and counts and drops what it cannot send (live data is not queued).
public struct MQTTPublisherService: Service {
    /// The source the publisher reads as: `hrmctl auth grant hrmd/mqtt heart-rate --read`.
    public static let source = "hrmd/mqtt"

    /// Straps announced to Home Assistant at most; past it, the one heard from longest ago is
    /// forgotten (its retained documents cleared).
    public static let maximumStraps = 128
    /// Events the publisher's live queue holds before the feed gives it a gap.
    static let liveCapacity = 1024

    private let settings: MQTTSettings
    private let store: HealthStore
    private let feed: LiveFeed
    private let logger: Logger
    private let connection: MosquittoConnection
    private let inputs: AsyncStream<PublisherInput>
    private let input: AsyncStream<PublisherInput>.Continuation

    /// Sets up the client (credentials, TLS, will) without connecting: a setting libmosquitto
    /// refuses is an error here, before hrmd starts.
    public init(settings: MQTTSettings, store: HealthStore, feed: LiveFeed, logger: Logger) throws(MQTTPublisherError) {
        self.settings = settings
        self.store = store
        self.feed = feed
        self.logger = logger
        (inputs, input) = AsyncStream<PublisherInput>.makeStream(bufferingPolicy: .bufferingNewest(4 * Self.liveCapacity))
        var options = settings.connection
        options.will = MosquittoMessage(topic: settings.layout.statusTopic, text: MQTTLayout.offline, retain: true)
        do {
            connection = try MosquittoConnection(options: options) { [input] event in input.yield(.connection(event)) }
        } catch {
            throw MQTTPublisherError("mqtt: cannot set up the client for \(settings.brokerName): \(error)")
        }
    }

    public func run() async throws {
        let types = settings.types
        let workers = StoreWorkers(label: "hrmd.mqtt")
        do {
            try await workers.run { [store] () throws(HealthStoreError) in
                try store.requestAuthorization(source: Self.source, toShare: [], toRead: types)
            }
        } catch {
            logger.warning("mqtt: cannot record the read request of \(Self.source): \(error)")
        }
        let subscription = feed.subscribe(LiveReader(source: Self.source, isManager: false, types: Set(types)), capacity: Self.liveCapacity)
        connection.start()
        var publisher = StrapPublisher(settings: settings, connection: connection, logger: logger)
        await withTaskGroup(of: Void.self) { group in
            group.addTask { [input] in
                while let event = await subscription.next() { input.yield(.live(event)) }
            }
            group.addTask { [input] in
                while !Task.isCancelled {
                    try? await Task.sleep(for: WorkoutPublisher.tickInterval)
                    input.yield(.tick)
                }
            }
            group.addTask { [input, store] in
                while !Task.isCancelled {
                    let statuses = try? await workers.run { () throws(HealthStoreError) -> [(SampleType, AuthorizationStatus)] in
                        var statuses: [(SampleType, AuthorizationStatus)] = []
                        for type in types { statuses.append((type, try store.readStatus(source: Self.source, type: type))) }
                        return statuses
                    }
                    if let statuses { input.yield(.permissions(statuses)) }
                    try? await Task.sleep(for: .seconds(1))
                }
            }
            for await next in inputs.cancelOnGracefulShutdown() {
                guard publisher.handle(next) else { break }
            }
            group.cancelAll()
        }
        feed.unsubscribe(subscription)
        await connection.stop(farewell: MosquittoMessage(topic: settings.layout.statusTopic, text: MQTTLayout.offline, retain: true), within: .seconds(2))
        logger.info("mqtt: stopped: \(publisher.sent) messages sent, \(publisher.droppedInAll) dropped")
    }
}

/// What reaches the publisher's one loop.
enum PublisherInput: Sendable {
    case connection(MosquittoEvent)
    case live(LiveEvent)
    case permissions([(SampleType, AuthorizationStatus)])
    /// Time to tell the open workouts' elapsed time again.
    case tick
}

/// The publisher's state and decisions: which straps it knows, what it last sent of each,
/// what it says in the log; one loop owns it.
struct StrapPublisher {
    /// The connection's state as last logged, so the log says each change once.
    private enum LinkState: Equatable {
        case starting, connected, refused, unreachable, lost
    }

    private let settings: MQTTSettings
    private let connection: MosquittoConnection
    private let logger: Logger
    private var link = LinkState.starting
    private var everConnected = false
    /// Straps seen, by device identifier, as Home Assistant is told of them: at most
    /// ``MQTTPublisherService/maximumStraps``, the one heard from longest ago forgotten first.
    private var straps: [String: StrapDescription] = [:]
    /// When each strap was last published, in samples published.
    private var lastPublished: [String: Int] = [:]
    private var published = 0
    private var notOwn = 0
    private var battery: [String: Int] = [:]
    private var contact: [String: Bool] = [:]
    /// Each strap's events as last published, by device and event type.
    private var events: [String: [StrapMeasurement: HealthEvent]] = [:]
    /// Types the source may read, as last logged.
    private var readable: [SampleType: Bool] = [:]
    private(set) var sent = 0
    private(set) var droppedInAll = 0
    private var droppedSinceConnected = 0
    private var withoutDevice = 0
    private var workouts: WorkoutPublisher

    init(settings: MQTTSettings, connection: MosquittoConnection, logger: Logger) {
        self.settings = settings
        self.connection = connection
        self.logger = logger
        workouts = WorkoutPublisher(layout: settings.layout, publishesDiscovery: settings.publishesDiscovery)
    }

    private var layout: MQTTLayout { settings.layout }

    /// Acts on one input; false when the feed ended this reader.
    mutating func handle(_ input: PublisherInput) -> Bool {
        switch input {
        case .connection(let event): connectionChanged(event)
        case .permissions(let statuses): permissionsChanged(statuses)
        case .live(.sample(let sample)): publish(sample.stored)
        case .live(.state(let activity)): stateChanged(activity)
        case .live(.workout(let change)):
            for message in workouts.messages(for: change, now: .now()) { send(message) }
        case .live(.healthEvent(let event)): eventChanged(event)
        case .live(.healthEventDeleted(let deleted)): eventDeleted(deleted)
        case .tick:
            if connection.isConnected { for message in workouts.tick(now: .now()) { send(message) } }
        case .live(.gap(let missed)): logger.debug("mqtt: fell behind the live feed; \(missed) events skipped")
        case .live(.keepalive): break
        case .live(.ended(let reason)):
            logger.info("mqtt: the live feed ended: \(reason)")
            return false
        }
        return true
    }

    private mutating func connectionChanged(_ event: MosquittoEvent) {
        let broker = settings.brokerName
        switch event {
        case .connected:
            if everConnected {
                logger.notice("mqtt: reconnected to \(broker); \(droppedSinceConnected) messages dropped while disconnected")
            } else {
                logger.notice("mqtt: connected to \(broker)")
            }
            everConnected = true
            link = .connected
            droppedSinceConnected = 0
            announce()
        case .refused(let code, let reason):
            guard link != .refused else { return }
            link = .refused
            if code == 4 || code == 5 {
                logger.error("mqtt: connection refused: bad credentials (\(broker) answered: \(reason)); retrying with back-off, samples are still stored")
            } else {
                logger.error("mqtt: connection refused by \(broker): \(reason); retrying with back-off, samples are still stored")
            }
        case .unreachable(let reason):
            guard link != .unreachable else { return }
            link = .unreachable
            logger.warning("mqtt: broker unreachable: \(reason); retrying with back-off (1 s doubling to 60 s), samples are still stored")
        case .lost(let reason):
            guard link != .lost else { return }
            link = .lost
            logger.warning("mqtt: connection to \(broker) lost: \(reason); reconnecting")
        }
    }

    /// After each (re)connection: the status, the discovery documents and the slow-changing
    /// states of every strap known.
    private mutating func announce() {
        send(MosquittoMessage(topic: layout.statusTopic, text: MQTTLayout.online, retain: true))
        if settings.publishesDiscovery {
            send(MosquittoMessage(topic: layout.gatewayDiscoveryTopic, text: layout.gatewayDiscoveryDocument.serialized, retain: true))
        }
        for strap in straps.values.sorted(by: { $0.identifier < $1.identifier }) {
            discover(strap)
            if let level = battery[strap.identifier] { sendBattery(level, device: strap.identifier) }
            if let detected = contact[strap.identifier] { sendContact(detected, device: strap.identifier) }
            for event in events[strap.identifier, default: [:]].values { sendEvent(event, device: strap.identifier) }
        }
        for message in workouts.announce(now: .now()) { send(message) }
    }

    private mutating func discover(_ strap: StrapDescription) {
        guard settings.publishesDiscovery else { return }
        for (topic, document) in layout.discoveryMessages(for: strap) {
            send(MosquittoMessage(topic: topic, text: document, retain: true))
        }
    }

    /// The strap's problem sensor of the event's type: on while it is open, off once it ended,
    /// with the event as attributes. The state is sent when it changes (an event opens or
    /// ends); the attributes when what they show changes (a new extreme, the wearer), not for
    /// each extension by a later reading.
    private mutating func eventChanged(_ event: HealthEvent) {
        guard event.source == HealthSource.eventWriter, let device = event.device, let measurement = StrapMeasurement.event(event.type) else { return }
        let last = events[device]?[measurement]
        let sameEvent = last?.id == event.id
        if let last, sameEvent, last.isOpen == event.isOpen, last.extreme == event.extreme, last.person == event.person { return }
        events[device, default: [:]][measurement] = event
        heard(device)
        if straps[device] == nil { remember(StrapDescription(identifier: device)) }
        sendEvent(event, device: device, state: !sameEvent || last?.isOpen != event.isOpen)
    }

    /// An event deleted: when it was the last of its type on its strap, the strap's problem
    /// sensor's attributes are cleared (only ended events are deleted, so the sensor is off
    /// already; an open one would be turned off).
    private mutating func eventDeleted(_ deleted: DeletedEvent) {
        guard let device = deleted.device, let measurement = StrapMeasurement.event(deleted.type),
            let last = events[device]?[measurement], last.id == deleted.id
        else { return }
        events[device]?[measurement] = nil
        send(MosquittoMessage(topic: layout.attributesTopic(device: device, measurement), text: "{}", retain: true))
        if last.isOpen {
            send(MosquittoMessage(topic: layout.stateTopic(device: device, measurement), text: MQTTLayout.problemPayload(false), retain: true))
        }
    }

    private mutating func sendEvent(_ event: HealthEvent, device: String, state: Bool = true) {
        guard let measurement = StrapMeasurement.event(event.type) else { return }
        send(MosquittoMessage(topic: layout.attributesTopic(device: device, measurement), text: EventJSON.object(event).serialized, retain: true))
        guard state else { return }
        send(MosquittoMessage(topic: layout.stateTopic(device: device, measurement), text: MQTTLayout.problemPayload(event.isOpen), retain: true))
    }

    /// Notes that `device` was just published: the strap heard from longest ago is forgotten first.
    private mutating func heard(_ device: String) {
        published += 1
        lastPublished[device] = published
    }

    /// Announces a strap first heard of (forgetting the one heard from longest ago past
    /// ``MQTTPublisherService/maximumStraps``).
    private mutating func remember(_ strap: StrapDescription) {
        if straps.count >= MQTTPublisherService.maximumStraps { forgetLongestSilent() }
        straps[strap.identifier] = strap
        logger.info("mqtt: publishing a strap", metadata: ["device": .string(strap.identifier), "topic": .string(layout.stateTopic(device: strap.identifier, .heartRate))])
        if connection.isConnected { discover(strap) }
        if let level = battery[strap.identifier] { sendBattery(level, device: strap.identifier) }
    }

    private mutating func publish(_ stored: StoredSample) {
        // Only hrmd's own sensors publish: an application that may save heart rate cannot put
        // values on a strap's topics, nor add devices to Home Assistant.
        guard stored.source.name == HealthSource.daemonName else {
            notOwn += 1
            if notOwn == 1 { logger.info("mqtt: only hrmd's own sensors are published; samples of other applications are not", metadata: ["source": .string(stored.source.name)]) }
            return
        }
        guard let device = stored.sample.device else {
            withoutDevice += 1
            if withoutDevice == 1 { logger.info("mqtt: samples without a device are not published", metadata: ["source": .string(stored.source.name)]) }
            return
        }
        let identifier = device.localIdentifier
        heard(identifier)
        if straps[identifier] == nil {
            remember(StrapDescription(
                identifier: identifier, name: device.name, manufacturer: device.manufacturer, model: device.model,
                firmwareVersion: device.firmwareVersion, hardwareVersion: device.hardwareVersion))
        }
        switch stored.sample.type {
        case .heartRate:
            send(MosquittoMessage(topic: layout.stateTopic(device: identifier, .heartRate), text: MQTTLayout.valuePayload(stored.sample.canonicalValue)))
            if let detected = stored.sample.metadata.sensorContact, contact[identifier] != detected {
                contact[identifier] = detected
                sendContact(detected, device: identifier)
            }
        case .rrInterval where layout.publishesRRIntervals:
            send(MosquittoMessage(topic: layout.stateTopic(device: identifier, .rrInterval), text: MQTTLayout.valuePayload(stored.sample.canonicalValue)))
        default:
            break
        }
    }

    /// Forgets the strap published longest ago: its retained messages (discovery documents,
    /// battery, contact) are cleared on the broker, so that what is retained stays bounded.
    private mutating func forgetLongestSilent() {
        guard let (identifier, _) = lastPublished.filter({ straps[$0.key] != nil }).min(by: { $0.value < $1.value }),
              let strap = straps.removeValue(forKey: identifier)
        else { return }
        lastPublished[identifier] = nil
        battery[identifier] = nil
        contact[identifier] = nil
        events[identifier] = nil
        logger.notice("mqtt: more than \(MQTTPublisherService.maximumStraps) straps: the one heard from longest ago is no longer announced", metadata: ["device": .string(identifier)])
        if settings.publishesDiscovery {
            for (topic, _) in layout.discoveryMessages(for: strap) { send(MosquittoMessage(topic: topic, text: "", retain: true)) }
        }
        for measurement in StrapMeasurement.allCases where measurement.isRetained {
            send(MosquittoMessage(topic: layout.stateTopic(device: identifier, measurement), text: "", retain: true))
            if measurement.eventType != nil {
                send(MosquittoMessage(topic: layout.attributesTopic(device: identifier, measurement), text: "", retain: true))
            }
        }
    }

    private mutating func stateChanged(_ activity: SensorActivity) {
        guard let level = activity.battery, battery[activity.identifier] != level else { return }
        battery[activity.identifier] = level
        if straps[activity.identifier] != nil { sendBattery(level, device: activity.identifier) }
    }

    private mutating func sendBattery(_ level: Int, device: String) {
        send(MosquittoMessage(topic: layout.stateTopic(device: device, .battery), text: String(level), retain: true))
    }

    private mutating func sendContact(_ detected: Bool, device: String) {
        send(MosquittoMessage(topic: layout.stateTopic(device: device, .contact), text: MQTTLayout.contactPayload(detected), retain: true))
    }

    private mutating func send(_ message: MosquittoMessage) {
        switch connection.publish(message) {
        case .queued:
            sent += 1
        case .notConnected, .backlogged:
            droppedInAll += 1
            droppedSinceConnected += 1
        case .failed(let error):
            droppedInAll += 1
            droppedSinceConnected += 1
            logger.debug("mqtt: cannot send: \(error)", metadata: ["topic": .string(message.topic)])
        }
    }

    private mutating func permissionsChanged(_ statuses: [(SampleType, AuthorizationStatus)]) {
        for (type, status) in statuses {
            let granted = status == .sharingAuthorized
            let before = readable[type]
            readable[type] = granted
            guard before != granted else { continue }
            let command = "hrmctl auth grant \(MQTTPublisherService.source) \(type.identifier) --read"
            switch (before, granted) {
            case (_, true):
                logger.notice("mqtt: \(MQTTPublisherService.source) may read \(type.identifier): publishing")
            case (nil, false):
                logger.notice("mqtt: waiting for permission to read \(type.identifier); grant it with: \(command)")
            case (_, false):
                logger.notice("mqtt: permission to read \(type.identifier) withdrawn: nothing of it is published until it is granted again (\(command))")
            }
        }
    }
}
