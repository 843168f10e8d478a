import BluetoothWire
import SensorDecoding
import Timestamps

/// One LE link of a btsnoop capture on its way to frames. Its ATT traffic teaches it the
/// servers' handles (the discovery the capture holds); once the link shows a Heart Rate
/// Measurement characteristic (discovered, named with `--handle`, or guessed when it closes)
/// its frames go out in capture order: `connected`, reads of the location, battery and device
/// information, notifications of 0x2A37, 0x2A38 and 0x2A19, `disconnected`. The frames of a
/// link that never shows one (another kind of device) are dropped.
struct CapturedLink {
    let id: LinkID
    let device: SensorID
    /// Whether the capture holds the connection's start.
    let announced: Bool
    /// The handle named as the Heart Rate Measurement's, overriding discovery.
    private let measurementHandle: UInt16?
    private var observer = GATTObserver()
    /// Whether the link has shown a Heart Rate Measurement characteristic.
    private(set) var carriesHeartRate = false
    /// Heart Rate Measurement notifications delivered.
    private(set) var measurementCount = 0
    /// Frames waiting for the link to show heart rate, with their record numbers.
    private var held: [(record: Int, entry: RecordingEntry)] = []
    /// Notifications of handles no discovery has named yet.
    private var unresolved: [ServerHandle: [HeldNotification]] = [:]
    private var toldConflict = false

    /// What a handle's values are to the pipeline.
    private enum Role: Equatable {
        case measurement
        case characteristic(CharacteristicID)
        case unknown
        case ignored
    }

    init(id: LinkID, device: SensorID, announced: Bool, measurementHandle: UInt16?) {
        self.id = id
        self.device = device
        self.announced = announced
        self.measurementHandle = measurementHandle
    }

    /// The link and its device, for messages.
    var name: String { "\(id) (\(device))" }

    mutating func connected(at time: Timestamp, record: Int, into out: inout [RecordingEntry]) {
        emit(frame(.connected, at: time, record: record), record: record, into: &out)
    }

    /// Takes one ATT PDU `sender` sent, captured at `time` in record `record`.
    mutating func take(_ pdu: ATTPDU, from sender: LinkSide, at time: Timestamp, record: Int, into out: inout [RecordingEntry]) {
        guard let observation = observer.observe(pdu, from: sender) else { return }
        switch observation {
        case .notified(let handle, let value, let server, _):
            let key = ServerHandle(server: server, handle: handle)
            let role = role(of: key)
            if handle == measurementHandle { tellConflict(key, into: &out) }
            if role == .unknown {
                unresolved[key, default: []].append(HeldNotification(record: record, time: time, value: value))
                return
            }
            deliver(HeldNotification(record: record, time: time, value: value), as: role, into: &out)
            if role == .measurement, !carriesHeartRate { becomeHeartRate(into: &out) }
        case .read(let entries, let server):
            for entry in entries {
                guard case .characteristic(let characteristic) = role(of: ServerHandle(server: server, handle: entry.handle)),
                      Self.readable.contains(characteristic) || DeviceInformationField(characteristic) != nil
                else { continue }
                emit(frame(.read, characteristic, entry.value, at: time, record: record), record: record, into: &out)
            }
            resolve(into: &out)
        case .learned:
            resolve(into: &out)
        }
    }

    /// The link closed (`disconnection`, its time and record) or the capture ended (nil):
    /// settles the notifications of handles no discovery named, guessing which carries heart
    /// rate when nothing else says.
    mutating func close(disconnection: (time: Timestamp, record: Int)?, into out: inout [RecordingEntry]) {
        if !carriesHeartRate, measurementHandle == nil, !unresolved.isEmpty {
            let counts = unresolved.mapValues(\.count)
            switch MeasurementHandleGuess(unresolved) {
            case .one(let key):
                out.append(.notice(
                    "\(name): the capture holds no GATT discovery of handle \(key.description); its \(counts[key] ?? 0) notifications "
                        + "all decode as heart-rate measurements (0x2A37), so they are stored as such; name the handle with --handle to choose"))
                for notification in unresolved[key] ?? [] { deliver(notification, as: .measurement, into: &out) }
                becomeHeartRate(into: &out)
            case .several(let keys):
                out.append(.unusable(
                    reason: "\(name): the capture holds no GATT discovery, and the notifications of several handles could be heart-rate "
                        + "measurements (\(keys.map { "\($0.description): \(counts[$0] ?? 0)" }.joined(separator: ", "))); none is "
                        + "stored: name the Heart Rate Measurement handle with --handle"))
            case .none:
                out.append(.notice(
                    "\(name): no GATT discovery in the capture, and the notifications of "
                        + "\(counts.keys.sorted().map(\.description).joined(separator: ", ")) are not heart-rate measurements; nothing from it is stored"))
            }
        }
        unresolved = [:]
        if carriesHeartRate, let disconnection {
            out.append(frame(.disconnected, at: disconnection.time, record: disconnection.record))
        }
        held = []
    }

    // MARK: Roles and delivery

    /// Characteristics whose reads the pipeline uses (besides Device Information strings).
    private static let readable: Set<CharacteristicID> = [.bodySensorLocation, .batteryLevel]
    /// Characteristics whose notifications the pipeline uses.
    private static let notifiable: Set<CharacteristicID> = [.heartRateMeasurement, .bodySensorLocation, .batteryLevel]

    /// The handle `--handle` names carries heart rate, and no other; without it, discovery says.
    private func role(of key: ServerHandle) -> Role {
        if key.handle == measurementHandle { return .measurement }
        guard let uuid = observer.table(of: key.server).characteristicUUID(at: key.handle) else {
            return measurementHandle == nil ? .unknown : .ignored
        }
        guard let short = uuid.short else { return .ignored }
        guard short == CharacteristicID.heartRateMeasurement.rawValue else { return .characteristic(CharacteristicID(rawValue: short)) }
        return measurementHandle == nil ? .measurement : .ignored
    }

    private mutating func deliver(_ notification: HeldNotification, as role: Role, into out: inout [RecordingEntry]) {
        let characteristic: CharacteristicID
        switch role {
        case .measurement:
            characteristic = .heartRateMeasurement
            measurementCount += 1
        case .characteristic(let other) where Self.notifiable.contains(other):
            characteristic = other
        default:
            return
        }
        let entry = frame(.notify, characteristic, notification.value, at: notification.time, record: notification.record)
        emit(entry, record: notification.record, into: &out)
    }

    /// Delivers the waiting notifications of handles discovery has now named, and opens the
    /// link when a server shows a Heart Rate Measurement characteristic.
    private mutating func resolve(into out: inout [RecordingEntry]) {
        for (key, notifications) in unresolved {
            let role = role(of: key)
            guard role != .unknown else { continue }
            unresolved[key] = nil
            for notification in notifications { deliver(notification, as: role, into: &out) }
        }
        guard !carriesHeartRate, measurementHandle == nil else { return }
        if observer.servers.values.contains(where: { !$0.valueHandles(of: .heartRateMeasurement).isEmpty }) { becomeHeartRate(into: &out) }
    }

    /// From now on frames go out as they come; the held ones go first, in capture order.
    private mutating func becomeHeartRate(into out: inout [RecordingEntry]) {
        carriesHeartRate = true
        if !announced {
            out.append(.notice(
                "\(id) was open before the capture began, so its peer's address is unknown; its samples are stored under the device \(device)"))
        }
        let ordered = held.enumerated().sorted { ($0.element.record, $0.offset) < ($1.element.record, $1.offset) }
        out += ordered.map(\.element.entry)
        held = []
    }

    private mutating func emit(_ entry: RecordingEntry, record: Int, into out: inout [RecordingEntry]) {
        if carriesHeartRate { out.append(entry) } else { held.append((record, entry)) }
    }

    private mutating func tellConflict(_ key: ServerHandle, into out: inout [RecordingEntry]) {
        guard !toldConflict, let uuid = observer.table(of: key.server).characteristicUUID(at: key.handle), uuid != .heartRateMeasurement else {
            return
        }
        toldConflict = true
        out.append(.notice(
            "\(name): the capture's discovery says handle \(key.description) is characteristic \(uuid), not 0x2A37; its notifications "
                + "are stored as heart-rate measurements as --handle asks"))
    }

    private func frame(
        _ kind: FrameKind, _ characteristic: CharacteristicID? = nil, _ value: [UInt8] = [], at time: Timestamp, record: Int
    ) -> RecordingEntry {
        .frame(SensorFrame(time: time, transport: .ble, device: device, kind: kind, characteristic: characteristic, value: value), line: record)
    }
}
