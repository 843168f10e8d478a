import SDBus
import Logging
import SensorBackend
import SensorFrames

/// BLE heart-rate straps through bluetoothd's D-Bus API (`org.bluez`), all of them in one
/// backend: it follows the system bus, bluetoothd (restarts included) and the adapters,
/// discovers while a wanted strap is missing, and runs one `StrapConnection` per admitted
/// strap, side by side, so a slow or broken strap never holds up the others.
public struct BlueZSensors: SensorBackend {
    public struct Settings: Sendable, Hashable {
        /// `--sensor ble:ADDRESS` addresses; empty means the straps trusted or paired in BlueZ.
        public var addresses: [String]
        /// Also admit any strap advertising the Heart Rate service.
        public var anyStrap: Bool
        /// How long one `Device1.Connect` may take.
        public var connectTimeout: Duration
        /// How long to wait for `ServicesResolved` after connecting.
        public var servicesTimeout: Duration
        public var backoff: Backoff
        /// How to tell a strap whose every link ends at the same age; each strap starts from a copy.
        public var linkAgeDiagnosis: LinkAgeDiagnosis
        /// The bus to use; nil is the system bus (`DBUS_SYSTEM_BUS_ADDRESS` or the standard socket).
        public var busAddress: String?

        public init(
            addresses: [String] = [], anyStrap: Bool = false, connectTimeout: Duration = .seconds(30),
            servicesTimeout: Duration = .seconds(20), backoff: Backoff = Backoff(),
            linkAgeDiagnosis: LinkAgeDiagnosis = LinkAgeDiagnosis(), busAddress: String? = nil
        ) {
            self.addresses = addresses.map { $0.uppercased() }
            self.anyStrap = anyStrap
            self.connectTimeout = connectTimeout
            self.servicesTimeout = servicesTimeout
            self.backoff = backoff
            self.linkAgeDiagnosis = linkAgeDiagnosis
            self.busAddress = busAddress
        }
    }

    public let settings: Settings
    public var name: String { "ble" }
    private let logger: Logger
    private let jitter: any JitterSource

    public init(settings: Settings, logger: Logger = Logger(label: "hrmd.ble"), jitter: any JitterSource = SystemJitter()) {
        self.settings = settings
        self.logger = logger
        self.jitter = jitter
    }

    private var admission: StrapAdmission { StrapAdmission(listed: settings.addresses, anyStrap: settings.anyStrap) }
    private var namedTargets: [SensorID] { settings.addresses.isEmpty ? [SensorID(name)] : settings.addresses.map { SensorID($0) } }

    public func run(into sink: FrameSink) async throws {
        let board = StatusBoard(sink: sink, transport: .ble, logger: logger)
        var attempt = 0
        while !Task.isCancelled {
            let bus: DBusConnection
            do {
                if let address = settings.busAddress {
                    bus = try DBusConnection.connect(address: address)
                } else {
                    bus = try DBusConnection.system()
                }
            } catch {
                attempt += 1
                logger.debug("BlueZ: cannot connect to the system bus: \(error)")
                board.reportAll(.waiting(reason: "no system bus"), including: namedTargets)
                do { try await Task.sleep(for: settings.backoff.delay(attempt: attempt, unit: jitter.next())) } catch { return }
                continue
            }
            attempt = 0
            await follow(bus, sink: sink, board: board)
            bus.close()
            if !Task.isCancelled { board.reportAll(.waiting(reason: "no system bus"), including: namedTargets) }
        }
    }

    /// Follows bluetoothd on `bus` until the bus closes or the task is cancelled.
    private func follow(_ bus: DBusConnection, sink: FrameSink, board: StatusBoard) async {
        while !Task.isCancelled && bus.isOpen {
            do throws(DBusError) {
                let owners = try await bus.signals(matching: DBusMatchRule(
                    sender: "org.freedesktop.DBus", interface: "org.freedesktop.DBus", member: "NameOwnerChanged", arg0: BlueZ.service))
                let owner: String
                do throws(DBusError) {
                    let reply = try await bus.call(
                        destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                        member: "GetNameOwner", arguments: [.string(BlueZ.service)])
                    owner = reply.first?.string ?? ""
                } catch where error.name == "org.freedesktop.DBus.Error.NameHasNoOwner" {
                    board.reportAll(.waiting(reason: "bluetoothd not running"), including: namedTargets)
                    for await change in owners where change.arguments.count == 3 && change.arguments[2].string?.isEmpty == false { break }
                    continue  // a fresh subscription and look again
                }
                try await serve(bus, owner: owner, owners: owners, sink: sink, board: board)
            } catch {
                if Task.isCancelled || !bus.isOpen { return }
                logger.warning("BlueZ: \(BlueZFailure(error).reason); starting over")
                do { try await Task.sleep(for: .seconds(1)) } catch { return }
            }
        }
    }

    /// One bluetoothd lifetime: cache, discovery, one child task per strap.
    private func serve(
        _ bus: DBusConnection, owner: String, owners: AsyncStream<DBusSignal>, sink: FrameSink, board: StatusBoard
    ) async throws(DBusError) {
        let model = BlueZModel()
        // Before GetManagedObjects. The model takes every signal on the bus's loop thread
        // (`BlueZModel.take`): measurement notifications go straight to their strap's sink, the
        // rest into the cache before the loop reads the next message, so a reply from bluetoothd
        // finds in the cache everything bluetoothd sent before it. The stream itself stays
        // empty and ends when the bus closes.
        let signals = try await bus.signals(matching: DBusMatchRule(sender: BlueZ.service), taking: model.take)
        let reply = try await bus.call(destination: BlueZ.service, path: "/", interface: BlueZ.objectManager, member: "GetManagedObjects")
        guard let objects = reply.first else { throw .unexpectedReply("GetManagedObjects returned nothing") }
        model.load(managedObjects: objects)
        logger.info("BlueZ: bluetoothd \(owner) has \(model.cache.adapters.count) adapter(s) and \(model.cache.devices.count) device(s)")
        let context = ConnectionContext(
            bus: bus, model: model, sink: sink, board: board, settings: settings, jitter: jitter, logger: logger)
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                for await _ in signals {}
                model.end()  // the bus closed
            }
            group.addTask {
                for await change in owners where change.arguments.count == 3 && change.arguments[2].string != owner { break }
                model.end()  // bluetoothd went away (or was replaced)
            }
            await supervise(model: model, context: context, group: &group)
            group.cancelAll()
        }
    }

    /// Starts a connection for each admitted strap as it appears, and runs discovery while a
    /// wanted strap is missing; returns when bluetoothd goes away.
    private func supervise(model: BlueZModel, context: ConnectionContext, group: inout TaskGroup<Void>) async {
        let (_, changes) = model.watch { $0.concernsSupervisor }
        var started = Set<String>()
        var discovering = Set<String>()
        var pending = settings.addresses  // listed straps wait for their device themselves
        var iterator = changes.makeAsyncIterator()
        var change: BlueZChange? = nil
        repeat {
            let cache = model.cache
            pending += admission.admitted(in: cache).map(\.address)
            for address in pending where started.insert(address).inserted {
                let strap = StrapConnection(address: address, context: context)
                group.addTask { await strap.run() }
            }
            pending.removeAll()
            if started.isEmpty {
                let state = cache.adapters.isEmpty ? SensorState.waiting(reason: "no adapter")
                    : cache.adapters.contains(where: \.powered) ? .searching : .waiting(reason: "adapter powered off")
                context.board.report(SensorID(name), state)
            }
            await updateDiscovery(cache, discovering: &discovering, bus: context.bus)
            change = await iterator.next()
        } while change != nil
    }

    /// Starts discovery (LE, Heart Rate service only) on each powered adapter while a wanted
    /// strap is missing, and stops what it started once none is.
    private func updateDiscovery(_ cache: BlueZObjectCache, discovering: inout Set<String>, bus: DBusConnection) async {
        let wanted = admission.isStrapMissing(in: cache)
        discovering.formIntersection(cache.adapters.filter(\.powered).map(\.path))
        for adapter in cache.adapters where adapter.powered {
            if wanted && !discovering.contains(adapter.path) {
                discovering.insert(adapter.path)
                do throws(DBusError) {
                    _ = try await bus.call(
                        destination: BlueZ.service, path: adapter.path, interface: BlueZ.adapterInterface, member: "SetDiscoveryFilter",
                        arguments: [.properties([("Transport", .string("le")), ("UUIDs", .strings([BlueZ.heartRateService]))])])
                    _ = try await bus.call(destination: BlueZ.service, path: adapter.path, interface: BlueZ.adapterInterface, member: "StartDiscovery")
                    logger.info("BlueZ: discovering heart-rate straps on \(adapter.path)")
                } catch {
                    if BlueZFailure(error) != .inProgress { logger.warning("BlueZ: StartDiscovery on \(adapter.path) failed: \(BlueZFailure(error).reason)") }
                }
            } else if !wanted && discovering.contains(adapter.path) {
                discovering.remove(adapter.path)
                do throws(DBusError) {
                    _ = try await bus.call(destination: BlueZ.service, path: adapter.path, interface: BlueZ.adapterInterface, member: "StopDiscovery")
                    logger.info("BlueZ: every wanted strap is known; discovery stopped on \(adapter.path)")
                } catch {
                    logger.notice("BlueZ: StopDiscovery on \(adapter.path) failed: \(BlueZFailure(error).reason)")
                }
            }
        }
    }
}
