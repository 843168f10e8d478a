import DBusClient
import Logging
import SensorBackends
import SensorDecoding
import Timestamps

/// What every strap's connection shares within one bluetoothd lifetime.
struct BlueZContext: Sendable {
    let bus: DBusConnection
    let model: BlueZModel
    let sink: FrameSink
    let board: StatusBoard
    let settings: BlueZSensors.Settings
    let jitter: any JitterSource
    let logger: Logger
}

/// One strap's life: wait for it and its adapter, connect, wait for services, read the body
/// sensor location, device information and battery, subscribe to Heart Rate Measurement once,
/// stream until the link drops, then back off and do it again, until cancelled.
struct StrapConnection: Sendable {
    let address: String
    let context: BlueZContext

    private var id: SensorID { SensorID(address) }

    /// The Device Information characteristics read after connecting.
    static let deviceInformation: [UInt16] = [0x2A29, 0x2A24, 0x2A27, 0x2A26, 0x2A28]

    enum Outcome: Equatable {
        case cancelled
        /// The session ended; `streamed` says whether notifications had started.
        case ended(reason: String, streamed: Bool)
    }

    /// How the Heart Rate Measurement subscription of the previous session was made, so a
    /// reconnect does not subscribe twice to what bluetoothd still remembers.
    struct Memory {
        var startNotifyPath: String?
    }

    func run() async {
        var attempt = 0
        var memory = Memory()
        while !Task.isCancelled {
            let outcome = await session(memory: &memory)
            guard case .ended(let reason, let streamed) = outcome, !Task.isCancelled else { return }
            attempt = streamed ? 1 : attempt + 1
            let delay = context.settings.backoff.delay(attempt: attempt, unit: context.jitter.next())
            let seconds = Double(delay.components.seconds) + Double(delay.components.attoseconds) / 1e18
            context.board.report(id, .backingOff(retryAt: Timestamp.now().advanced(bySeconds: seconds), reason: reason))
            do { try await Task.sleep(for: delay) } catch { return }
        }
    }

    // MARK: One session

    private enum Event: Sendable {
        case change(BlueZChange)
        case notification([UInt8])
        case socketClosed
        case bluetoothdGone
        case tick
    }

    private func session(memory: inout Memory) async -> Outcome {
        let (_, changes) = context.model.watch()
        let (events, feed) = AsyncStream<Event>.makeStream()
        return await withTaskGroup(of: Void.self) { group in
            group.addTask {
                for await change in changes { feed.yield(.change(change)) }
                feed.yield(.bluetoothdGone)
            }
            group.addTask {
                while (try? await Task.sleep(for: .milliseconds(250))) != nil { feed.yield(.tick) }
            }
            var session = Session(strap: self, events: events.makeAsyncIterator(), feed: feed)
            let outcome = await session.run(group: &group, memory: &memory)
            group.cancelAll()
            return outcome
        }
    }

    private struct Session {
        let strap: StrapConnection
        var events: AsyncStream<Event>.AsyncIterator
        let feed: AsyncStream<Event>.Continuation
        var connectedFrameSent = false
        var socket: NotificationSocket?

        var context: BlueZContext { strap.context }
        var bus: DBusConnection { context.bus }
        var id: SensorID { strap.id }

        mutating func run(group: inout TaskGroup<Void>, memory: inout Memory) async -> Outcome {
            let outcome = await connectAndStream(group: &group, memory: &memory)
            socket?.stop()
            if connectedFrameSent { send(.disconnected) }
            if outcome == .cancelled, connectedFrameSent, let device = context.model.cache.device(address: strap.address) {
                _ = try? await bus.call(destination: BlueZ.service, path: device.path, interface: BlueZ.deviceInterface, member: "Disconnect")
            }
            return outcome
        }

        private mutating func connectAndStream(group: inout TaskGroup<Void>, memory: inout Memory) async -> Outcome {
            // 1. The strap must be known to bluetoothd, on a powered adapter.
            var device: Device
            while true {
                let cache = context.model.cache
                if let found = cache.device(address: strap.address), cache.adapter(path: found.adapterPath)?.powered == true {
                    device = found
                    break
                }
                report(Self.waitingState(for: strap.address, in: cache))
                guard let event = await events.next() else { return .cancelled }
                if case .bluetoothdGone = event { return .ended(reason: "bluetoothd went away", streamed: false) }
            }

            // 2. Connect and wait for services.
            report(.connecting)
            if !device.connected {
                do {
                    _ = try await bus.call(
                        destination: BlueZ.service, path: device.path, interface: BlueZ.deviceInterface, member: "Connect",
                        timeout: context.settings.connectTimeout)
                } catch {
                    if Task.isCancelled { return .cancelled }
                    let failure = BlueZFailure(error)
                    if failure != .inProgress { return .ended(reason: failure.reason, streamed: false) }
                }
            }
            let deadline = ContinuousClock.now.advanced(by: context.settings.servicesTimeout)
            while true {
                guard let now = context.model.cache.device(path: device.path) else {
                    return .ended(reason: "the device disappeared while connecting", streamed: false)
                }
                device = now
                if device.servicesResolved && device.connected { break }
                if ContinuousClock.now >= deadline {
                    _ = try? await bus.call(destination: BlueZ.service, path: device.path, interface: BlueZ.deviceInterface, member: "Disconnect")
                    return .ended(reason: "services were not resolved within \(context.settings.servicesTimeout)", streamed: false)
                }
                guard let event = await events.next() else { return .cancelled }
                if case .bluetoothdGone = event { return .ended(reason: "bluetoothd went away", streamed: false) }
                if case .change(.propertiesChanged(device.path, BlueZ.deviceInterface, let changed)) = event,
                    changed["Connected"]?.bool == false {
                    return .ended(reason: "the strap disconnected while connecting", streamed: false)
                }
            }
            send(.connected)
            connectedFrameSent = true

            // 3. Reads: location, device information, battery.
            let cache = context.model.cache
            for uuid in [CharacteristicID.bodySensorLocation.rawValue] + StrapConnection.deviceInformation {
                guard let characteristic = cache.characteristic(BlueZ.uuid(uuid), of: device.path) else { continue }
                switch await read(characteristic) {
                case .success(let value): send(.read, CharacteristicID(rawValue: uuid), value)
                case .failure(let failure):
                    if failure == .gone || failure == .busClosed { return .ended(reason: failure.reason, streamed: false) }
                    context.logger.info("\(id): reading \(CharacteristicID(rawValue: uuid)) failed: \(failure.reason)")
                }
            }
            if let percent = device.batteryPercentage {
                send(.read, .batteryLevel, [percent])
            } else if let characteristic = cache.characteristic(BlueZ.uuid(0x2A19), of: device.path),
                case .success(let value) = await read(characteristic)
            {
                send(.read, .batteryLevel, value)
            }

            // 4. Subscribe to Heart Rate Measurement, once.
            guard let measurement = cache.characteristic(BlueZ.uuid(0x2A37), of: device.path) else {
                _ = try? await bus.call(destination: BlueZ.service, path: device.path, interface: BlueZ.deviceInterface, member: "Disconnect")
                return .ended(reason: "the strap has no Heart Rate Measurement characteristic", streamed: false)
            }
            var viaSocket = false
            if measurement.supportsAcquireNotify {
                do throws(DBusError) {
                    let reply = try await bus.call(
                        destination: BlueZ.service, path: measurement.path, interface: BlueZ.characteristicInterface,
                        member: "AcquireNotify", arguments: [.properties([])])
                    guard let descriptor = reply.first?.fileDescriptor else { throw .unexpectedReply("AcquireNotify without a descriptor") }
                    let mtu = Int(reply.dropFirst().first?.integer ?? 23)
                    let socket = try NotificationSocket(descriptor: descriptor, mtu: mtu)
                    self.socket = socket
                    let feed = feed
                    group.addTask {
                        for await notification in socket.notifications { feed.yield(.notification(notification)) }
                        feed.yield(.socketClosed)
                    }
                    viaSocket = true
                    memory.startNotifyPath = nil
                } catch {
                    if Task.isCancelled { return .cancelled }
                    let failure = BlueZFailure(error)
                    if failure == .gone || failure == .busClosed { return .ended(reason: failure.reason, streamed: false) }
                    context.logger.notice("\(id): AcquireNotify failed (\(failure.reason)); using StartNotify")
                }
            }
            if !viaSocket {
                let remembered = memory.startNotifyPath == measurement.path && measurement.notifying
                if !remembered {
                    do {
                        _ = try await bus.call(
                            destination: BlueZ.service, path: measurement.path, interface: BlueZ.characteristicInterface, member: "StartNotify")
                    } catch {
                        if Task.isCancelled { return .cancelled }
                        let failure = BlueZFailure(error)
                        if failure != .inProgress { return .ended(reason: "StartNotify failed: \(failure.reason)", streamed: false) }
                    }
                    memory.startNotifyPath = measurement.path
                }
            }
            report(.streaming)

            // 5. Stream until the link drops.
            while let event = await events.next() {
                switch event {
                case .notification(let value):
                    send(.notify, .heartRateMeasurement, value)
                case .socketClosed:
                    return .ended(reason: "the notification socket hung up (strap disconnected)", streamed: true)
                case .bluetoothdGone:
                    return .ended(reason: "bluetoothd went away", streamed: true)
                case .tick:
                    continue
                case .change(.propertiesChanged(let path, let interface, let changed)):
                    if !viaSocket, path == measurement.path, interface == BlueZ.characteristicInterface, let value = changed["Value"]?.bytes {
                        send(.notify, .heartRateMeasurement, value)
                    } else if path == device.path, interface == BlueZ.batteryInterface,
                        let percent = changed["Percentage"]?.integer.flatMap({ UInt8(exactly: $0) })
                    {
                        send(.read, .batteryLevel, [percent])
                    } else if path == device.path, interface == BlueZ.deviceInterface, changed["Connected"]?.bool == false {
                        return .ended(reason: "the strap disconnected", streamed: true)
                    }
                case .change(.interfacesRemoved(let path, let interfaces)):
                    if path == device.path, interfaces.contains(BlueZ.deviceInterface) {
                        return .ended(reason: "the device was removed from bluetoothd", streamed: true)
                    }
                    if path == measurement.path {
                        return .ended(reason: "the Heart Rate Measurement characteristic went away", streamed: true)
                    }
                case .change(.interfacesAdded):
                    continue
                }
            }
            return .cancelled
        }

        private func read(_ characteristic: Characteristic) async -> Result<[UInt8], BlueZFailure> {
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

        private func send(_ kind: FrameKind, _ characteristic: CharacteristicID? = nil, _ value: [UInt8] = []) {
            context.sink.send(SensorFrame(
                time: .now(), transport: .ble, device: id, kind: kind, characteristic: characteristic, value: value))
        }

        private func report(_ state: SensorState) { context.board.report(id, state) }

        /// Why a strap cannot be connected yet.
        static func waitingState(for address: String, in cache: BlueZObjectCache) -> SensorState {
            if cache.adapters.isEmpty { return .waiting(reason: "no adapter") }
            if let device = cache.device(address: address) {
                if cache.adapter(path: device.adapterPath)?.powered != true { return .waiting(reason: "adapter powered off") }
                return .connecting
            }
            if !cache.adapters.contains(where: \.powered) { return .waiting(reason: "adapter powered off") }
            return .searching
        }
    }
}
