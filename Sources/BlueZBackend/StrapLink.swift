import SDBus
import SensorBackend
import SensorFrames

/// One link of one strap through bluetoothd, step by step: wait for the strap and a powered
/// adapter, connect and wait for services, subscribe while reading, stream until the link
/// ends. Each step either returns what the next needs or throws how the link ended.
struct StrapLink {
    typealias Event = StrapConnection.Event
    typealias Outcome = StrapConnection.Outcome

    let strap: StrapConnection
    var events: AsyncStream<Event>.AsyncIterator
    let feed: AsyncStream<Event>.Continuation
    let ticks: TickNeed
    private var connectedFrameSent = false
    /// Whether bluetoothd was asked for this link (or the strap was found connected and taken):
    /// then a stop lets the strap go, also when the link was still coming up.
    private var linkTaken = false
    /// The AcquireNotify socket, read on the bus's loop thread.
    private var socket: DBusDatagramReading?
    /// The characteristic whose StartNotify notifications the model routes to the sink.
    private var routedPath: String?
    /// Where this link's notifications go (held until the reads are in).
    private let gate: NotificationGate

    init(strap: StrapConnection, events: AsyncStream<Event>.AsyncIterator, feed: AsyncStream<Event>.Continuation, ticks: TickNeed) {
        self.strap = strap
        self.events = events
        self.feed = feed
        self.ticks = ticks
        gate = NotificationGate(sink: strap.context.sink, device: strap.id)
    }

    private var context: ConnectionContext { strap.context }
    private var bus: DBusConnection { context.bus }
    private var id: SensorID { strap.id }

    mutating func run(memory: inout StrapConnection.Memory) async -> Outcome {
        var outcome = Outcome.cancelled
        do throws(Outcome) {
            let known = try await waitForStrap()
            let (device, settled) = try await connect(known)
            ticks.end()
            send(.connected)
            connectedFrameSent = true
            // The reads and the subscription go to bluetoothd together, which queues them on the
            // link: the strap streams after one exchange instead of after every read, and what
            // it sends before the reads are in waits at the gate.
            let (model, bus) = (context.model, bus)
            async let information = Self.readInformation(of: device, in: model, settling: !settled, on: bus)
            let (measurement, viaSocket) = try await subscribe(device, memory: &memory)
            report(.streaming)
            let since = ContinuousClock.now
            try send(await information)
            gate.open()
            try await stream(device, measurement: measurement, viaSocket: viaSocket, since: since)
        } catch {
            outcome = error
        }
        // After these no notification follows the disconnected frame; whatever the gate still
        // holds (the reads did not finish) goes first.
        await socket?.stop()
        if let routedPath { context.model.removeRoute(of: routedPath) }
        gate.open()
        if connectedFrameSent { send(.disconnected) }
        if outcome == .cancelled, linkTaken, let device = context.model.cache.device(address: strap.address) {
            // hrmd is stopping: leave the strap free, within a budget.
            await StopDisconnect(bus: bus, logger: context.logger).tell(device, id: id)
        }
        return outcome
    }

    /// The next event; cancellation and bluetoothd going away end the link.
    private mutating func nextEvent(streamingSince: ContinuousClock.Instant? = nil) async throws(Outcome) -> Event {
        guard let event = await events.next() else { throw .cancelled }
        if case .bluetoothdGone = event { throw .ended("bluetoothd went away", streamingSince: streamingSince) }
        return event
    }

    /// Waits until bluetoothd knows the strap and its adapter is powered.
    private mutating func waitForStrap() async throws(Outcome) -> Device {
        while true {
            let cache = context.model.cache
            if let device = cache.device(address: strap.address), cache.adapter(path: device.adapterPath)?.powered == true {
                return device
            }
            report(Self.waitingState(for: strap.address, in: cache))
            _ = try await nextEvent()
        }
    }

    /// Connects (unless already connected) and waits, bounded by the services timeout, for the
    /// services and the Heart Rate Measurement characteristic's object; says whether the cache
    /// was settled on the way (see `settle`).
    ///
    /// bluetoothd registers a strap's GATT objects before it sets `ServicesResolved`, but its
    /// gdbus sends them in either order: from idle callbacks the objects go first, while any
    /// message it sends before those run (a reply to anyone, a signal) first flushes every held
    /// change in the order their objects were first queued, and the device, queued earlier by
    /// another change, then announces `ServicesResolved` before its characteristics exist on
    /// the bus. Resolved services without the measurement's object are that second order: one
    /// call to bluetoothd brings them all.
    private mutating func connect(_ known: Device) async throws(Outcome) -> (Device, settled: Bool) {
        report(.connecting)
        linkTaken = true
        if !known.connected {
            do {
                _ = try await bus.call(
                    destination: BlueZ.service, path: known.path, interface: BlueZ.deviceInterface, member: "Connect",
                    timeout: context.settings.connectTimeout)
            } catch {
                if Task.isCancelled { throw .cancelled }
                let failure = BlueZFailure(error)
                if failure != .inProgress { throw .ended(reason: failure.reason, streamedFor: nil) }
            }
        }
        let deadline = ContinuousClock.now.advanced(by: context.settings.servicesTimeout)
        var settled = false
        while true {
            let cache = context.model.cache
            guard let device = cache.device(path: known.path) else {
                throw .ended(reason: "the device disappeared while connecting", streamedFor: nil)
            }
            if device.servicesResolved {
                if cache.characteristic(BlueZ.uuid(0x2A37), of: device.path) != nil { return (device, settled) }
                if !settled {
                    do throws(BlueZFailure) {
                        try await Self.settle(device, on: bus)
                    } catch {
                        if Task.isCancelled { throw .cancelled }
                        if error == .gone || error == .busClosed { throw .ended(reason: error.reason, streamedFor: nil) }
                    }
                    settled = true
                    continue
                }
            }
            if ContinuousClock.now >= deadline {
                await disconnect(device)
                throw .ended(
                    reason: device.servicesResolved
                        ? "the strap has no Heart Rate Measurement characteristic"
                        : "services were not resolved within \(context.settings.servicesTimeout)",
                    streamedFor: nil)
            }
            if case .change(.propertiesChanged(known.path, BlueZ.deviceInterface, let changed)) = try await nextEvent(),
                changed["Connected"]?.bool == false
            {
                throw .ended(reason: "the strap disconnected while connecting", streamedFor: nil)
            }
        }
    }

    /// One call to bluetoothd about `device`, for its reply alone: gdbus sends every change it
    /// holds before any message, and the model applies each signal before the bus reads on, so
    /// once this returns the cache holds every object bluetoothd made before answering.
    static func settle(_ device: Device, on bus: DBusConnection) async throws(BlueZFailure) {
        do {
            _ = try await bus.call(
                destination: BlueZ.service, path: device.path, interface: BlueZ.properties, member: "Get",
                arguments: [.string(BlueZ.deviceInterface), .string("ServicesResolved")])
        } catch {
            throw BlueZFailure(error)
        }
    }

    /// What one read after connecting gave.
    struct Reading {
        var characteristic: CharacteristicID
        var result: Result<[UInt8], BlueZFailure>
    }

    /// Reads the body sensor location, the device information and (unless bluetoothd's
    /// `Battery1` has it) the battery level, all asked at once: bluetoothd queues them on the
    /// link, so the strap answers them back to back instead of one round trip through the bus
    /// after another. The readings come back in that order.
    ///
    /// With `settling`, the cache is settled first: the measurement's object was there when
    /// the services were resolved, but the others may still be on their way (the subscription
    /// goes out meanwhile, and its write to the strap comes first on the link).
    static func readInformation(
        of device: Device, in model: BlueZModel, settling: Bool, on bus: DBusConnection
    ) async -> [Reading] {
        if settling { try? await settle(device, on: bus) }  // a strap gone fails its reads below
        let cache = model.cache
        let device = cache.device(path: device.path) ?? device  // its Battery1 may have come since
        var wanted = ([CharacteristicID.bodySensorLocation.rawValue] + StrapConnection.deviceInformation).compactMap { uuid in
            cache.characteristic(BlueZ.uuid(uuid), of: device.path).map { (CharacteristicID(rawValue: uuid), $0) }
        }
        if device.batteryPercentage == nil, let level = cache.characteristic(BlueZ.uuid(0x2A19), of: device.path) {
            wanted.append((.batteryLevel, level))
        }
        var readings = await withTaskGroup(of: (Int, Result<[UInt8], BlueZFailure>).self) { group in
            for (index, (_, characteristic)) in wanted.enumerated() {
                group.addTask { (index, await read(characteristic, on: bus)) }
            }
            var readings = wanted.map { Reading(characteristic: $0.0, result: .failure(.other("not read"))) }
            for await (index, result) in group { readings[index].result = result }
            return readings
        }
        if let percent = device.batteryPercentage { readings.append(Reading(characteristic: .batteryLevel, result: .success([percent]))) }
        return readings
    }

    /// Sends what the reads gave, in order, so the first samples carry the location and the
    /// device's description; a strap that went away ends the link.
    private func send(_ readings: [Reading]) throws(Outcome) {
        if Task.isCancelled { throw .cancelled }
        for reading in readings {
            switch reading.result {
            case .success(let value): send(.read, reading.characteristic, value)
            case .failure(let failure):
                if failure == .gone || failure == .busClosed { throw .ended(reason: failure.reason, streamedFor: nil) }
                // As before, a battery level that cannot be read is left out quietly.
                if reading.characteristic != .batteryLevel {
                    context.logger.info("\(id): reading \(reading.characteristic) failed: \(failure.reason)")
                }
            }
        }
    }

    /// Subscribes to Heart Rate Measurement once: `AcquireNotify` when bluetoothd offers it,
    /// else `StartNotify` (skipped when bluetoothd still holds this client's subscription).
    private mutating func subscribe(
        _ device: Device, memory: inout StrapConnection.Memory
    ) async throws(Outcome) -> (Characteristic, viaSocket: Bool) {
        guard let measurement = context.model.cache.characteristic(BlueZ.uuid(0x2A37), of: device.path) else {
            await disconnect(device)
            throw .ended(reason: "the strap has no Heart Rate Measurement characteristic", streamedFor: nil)
        }
        if measurement.supportsAcquireNotify {
            do throws(DBusError) {
                let reply = try await bus.call(
                    destination: BlueZ.service, path: measurement.path, interface: BlueZ.characteristicInterface,
                    member: "AcquireNotify", arguments: [.properties([])])
                guard let descriptor = reply.first?.fileDescriptor else { throw .unexpectedReply("AcquireNotify without a descriptor") }
                let mtu = Int(reply.dropFirst().first?.integer ?? 23)
                // Each notification goes straight to the sink from the bus's loop thread.
                socket = try await bus.readDatagrams(from: descriptor, maximumLength: max(mtu, 23)) { [gate, feed] event in
                    switch event {
                    case .datagram(let value): gate.deliver(value)
                    case .closed: feed.yield(.socketClosed)
                    }
                }
                memory.startNotifyPath = nil
                return (measurement, true)
            } catch {
                if Task.isCancelled { throw .cancelled }
                let failure = BlueZFailure(error)
                if failure == .gone || failure == .busClosed { throw .ended(reason: failure.reason, streamedFor: nil) }
                context.logger.notice("\(id): AcquireNotify failed (\(failure.reason)); using StartNotify")
            }
        }
        // Routed before subscribing, so the first notification finds its way.
        context.model.routeNotifications(of: measurement.path, to: gate.deliver)
        routedPath = measurement.path
        if memory.startNotifyPath != measurement.path || !measurement.notifying {
            do {
                _ = try await bus.call(
                    destination: BlueZ.service, path: measurement.path, interface: BlueZ.characteristicInterface, member: "StartNotify")
            } catch {
                if Task.isCancelled { throw .cancelled }
                let failure = BlueZFailure(error)
                if failure != .inProgress { throw .ended(reason: "StartNotify failed: \(failure.reason)", streamedFor: nil) }
            }
            memory.startNotifyPath = measurement.path
        }
        return (measurement, false)
    }

    /// Hands on notifications and battery changes until the link drops; `since` is when
    /// streaming began.
    private mutating func stream(
        _ device: Device, measurement: Characteristic, viaSocket: Bool, since: ContinuousClock.Instant
    ) async throws(Outcome) {
        while true {
            switch try await nextEvent(streamingSince: since) {
            case .socketClosed:
                throw .ended("the notification socket hung up (strap disconnected)", streamingSince: since)
            case .change(.propertiesChanged(let path, let interface, let changed)):
                if !viaSocket, path == measurement.path, interface == BlueZ.characteristicInterface, let value = changed["Value"]?.bytes {
                    send(.notify, .heartRateMeasurement, value)
                } else if path == device.path, interface == BlueZ.batteryInterface,
                    let percent = changed["Percentage"]?.integer.flatMap({ UInt8(exactly: $0) })
                {
                    send(.read, .batteryLevel, [percent])
                } else if path == device.path, interface == BlueZ.deviceInterface, changed["Connected"]?.bool == false {
                    throw .ended("the strap disconnected", streamingSince: since)
                }
            case .change(.interfacesRemoved(let path, let interfaces)):
                if path == device.path, interfaces.contains(BlueZ.deviceInterface) {
                    throw .ended("the device was removed from bluetoothd", streamingSince: since)
                }
                if path == measurement.path {
                    throw .ended("the Heart Rate Measurement characteristic went away", streamingSince: since)
                }
            case .change(.interfacesAdded), .tick, .bluetoothdGone:
                continue
            }
        }
    }

    private static func read(_ characteristic: Characteristic, on bus: DBusConnection) async -> Result<[UInt8], BlueZFailure> {
        do {
            let reply = try await bus.call(
                destination: BlueZ.service, path: characteristic.path, interface: BlueZ.characteristicInterface,
                member: "ReadValue", arguments: [.properties([])])
            guard let bytes = reply.first?.bytes else { return .failure(.other("ReadValue returned no bytes")) }
            return .success(bytes)
        } catch {
            return .failure(BlueZFailure(error))
        }
    }

    private func disconnect(_ device: Device) async {
        _ = try? await bus.call(destination: BlueZ.service, path: device.path, interface: BlueZ.deviceInterface, member: "Disconnect")
    }

    private func send(_ kind: FrameKind, _ characteristic: CharacteristicID? = nil, _ value: [UInt8] = []) {
        context.sink.send(SensorFrame(
            time: .now(), transport: .ble, device: id, kind: kind, characteristic: characteristic, value: value))
    }

    private func report(_ state: SensorState) { context.board.report(id, state) }

    /// Why a strap cannot be connected yet.
    static func waitingState(for address: String, in cache: BlueZObjectCache) -> SensorState {
        if cache.adapters.isEmpty { return .waiting(reason: "no adapter") }
        if let device = cache.device(address: address), cache.adapter(path: device.adapterPath)?.powered != true {
            return .waiting(reason: "adapter powered off")
        }
        if !cache.adapters.contains(where: \.powered) { return .waiting(reason: "adapter powered off") }
        return .searching
    }
}
