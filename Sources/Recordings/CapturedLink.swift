import BluetoothWire
import SensorFrames
import Timestamps

/// One LE link of a btsnoop capture on its way to frames. Its ATT traffic teaches it the
/// servers' handles (the discovery the capture holds); once the link shows a Heart Rate
/// Measurement characteristic (discovered, named with `--handle`, or guessed when it closes)
/// its frames go out in capture order: `connected`, reads of the location, battery and device
/// information, notifications of 0x2A37, 0x2A38 and 0x2A19, `disconnected`. The frames of a
/// link that never shows one (another kind of device) are dropped.
///
/// A capture is read twice so that nothing waits in memory for what the link shows later:
/// the first pass (`learning`) drops every frame and learns what the link will show (whether
/// it carries heart rate, and the role each undiscovered handle takes later); the second
/// (`delivering`) hands out each frame as its record comes, with that foresight.
struct CapturedLink {
    /// Which of the two passes over the capture this is.
    enum Pass {
        case learning
        case delivering(LinkForesight)
    }

    /// What the first pass learned of a link, for the second.
    struct LinkForesight {
        /// Whether the link shows heart rate before it closes.
        var carriesHeartRate = false
        /// The roles handles took when discovery (or the guess at the link's close) named them,
        /// in order: a handle's notifications before its n-th naming take the n-th role.
        var laterRoles: [ServerHandle: [Role]] = [:]
    }

    /// What a handle's values are to the pipeline.
    enum Role: Equatable {
        case measurement
        case characteristic(CharacteristicID)
        case unknown
        case ignored
    }

    /// The notifications of a handle no discovery has named yet: as much of them as the guess
    /// needs.
    private struct Unnamed {
        var count = 0
        /// Whether every one decodes as a Heart Rate Measurement (`MeasurementHandleGuess`).
        var allMeasurements = true

        mutating func take(_ value: [UInt8]) {
            count += 1
            if allMeasurements, !MeasurementHandleGuess.isMeasurement(value) { allMeasurements = false }
        }
    }

    let id: LinkID
    let device: SensorID
    /// Whether the capture holds the connection's start.
    let announced: Bool
    /// The handle named as the Heart Rate Measurement's, overriding discovery.
    private let measurementHandle: UInt16?
    private let pass: Pass
    private var observer = GATTObserver()
    /// Whether the link has shown a Heart Rate Measurement characteristic so far.
    private(set) var carriesHeartRate = false
    /// Heart Rate Measurement notifications delivered.
    private(set) var measurementCount = 0
    /// Notifications of handles no discovery has named yet.
    private var unnamed: [ServerHandle: Unnamed] = [:]
    /// How many times each handle has been named so far (the second pass's place in
    /// `LinkForesight.laterRoles`).
    private var namings: [ServerHandle: Int] = [:]
    /// The roles unnamed handles took, in order (what the first pass learns).
    private var laterRoles: [ServerHandle: [Role]] = [:]
    private var toldConflict = false

    init(id: LinkID, device: SensorID, announced: Bool, measurementHandle: UInt16?, pass: Pass) {
        self.id = id
        self.device = device
        self.announced = announced
        self.measurementHandle = measurementHandle
        self.pass = pass
    }

    /// What the first pass learned of this link so far.
    var foresight: LinkForesight { LinkForesight(carriesHeartRate: carriesHeartRate, laterRoles: laterRoles) }

    /// Whether frames go out: in the second pass, for a link that carries heart rate.
    private var delivers: Bool {
        if case .delivering(let foresight) = pass { foresight.carriesHeartRate } else { false }
    }

    /// Says what the link's device is named when the capture lacks its start (second pass).
    func opened(into out: inout [RecordingEntry]) {
        if delivers, !announced { out.append(unannouncedNotice) }
    }

    /// The link and its device, for messages.
    var name: String { "\(id) (\(device))" }

    mutating func connected(at time: Timestamp, record: Int, into out: inout [RecordingEntry]) {
        emit(frame(.connected, at: time, record: record), into: &out)
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
                unnamed[key, default: Unnamed()].take(value)
                if let later = laterRole(of: key) {
                    deliver(CapturedNotification(record: record, time: time, value: value), as: later, into: &out)
                }
                return
            }
            deliver(CapturedNotification(record: record, time: time, value: value), as: role, into: &out)
            if role == .measurement, !carriesHeartRate { becomeHeartRate() }
        case .read(let entries, let server):
            for entry in entries {
                guard case .characteristic(let characteristic) = role(of: ServerHandle(server: server, handle: entry.handle)),
                      Self.readable.contains(characteristic) || DeviceInformationField(characteristic) != nil
                else { continue }
                emit(frame(.read, characteristic, entry.value, at: time, record: record), into: &out)
            }
            resolve(into: &out)
        case .learned:
            resolve(into: &out)
        }
    }

    /// The link closed (`disconnection`, its time and record) or the capture ended (nil):
    /// settles the handles no discovery named, guessing which carries heart rate when nothing
    /// else says.
    mutating func close(disconnection: (time: Timestamp, record: Int)?, into out: inout [RecordingEntry]) {
        if !carriesHeartRate, measurementHandle == nil, !unnamed.isEmpty {
            switch MeasurementHandleGuess(unnamed.mapValues(\.allMeasurements)) {
            case .one(let key):
                out.append(.notice(
                    "\(name): the capture holds no GATT discovery of handle \(key.description); its \(unnamed[key]?.count ?? 0) notifications "
                        + "all decode as heart-rate measurements (0x2A37), so they are stored as such; name the handle with --handle to choose"))
                named(key, as: .measurement)
                becomeHeartRate()
            case .several(let keys):
                out.append(.unusable(
                    reason: "\(name): the capture holds no GATT discovery, and the notifications of several handles could be heart-rate "
                        + "measurements (\(keys.map { "\($0.description): \(unnamed[$0]?.count ?? 0)" }.joined(separator: ", "))); none is "
                        + "stored: name the Heart Rate Measurement handle with --handle"))
            case .none:
                out.append(.notice(
                    "\(name): no GATT discovery in the capture, and the notifications of "
                        + "\(unnamed.keys.sorted().map(\.description).joined(separator: ", ")) are not heart-rate measurements; nothing from it is stored"))
            }
        }
        unnamed = [:]
        if carriesHeartRate, let disconnection {
            emit(frame(.disconnected, at: disconnection.time, record: disconnection.record), into: &out)
        }
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

    private mutating func deliver(_ notification: CapturedNotification, as role: Role, into out: inout [RecordingEntry]) {
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
        emit(frame(.notify, characteristic, notification.value, at: notification.time, record: notification.record), into: &out)
    }

    /// Settles the handles discovery has now named, and opens the link when a server shows
    /// a Heart Rate Measurement characteristic.
    private mutating func resolve(into out: inout [RecordingEntry]) {
        for key in unnamed.keys {
            let role = role(of: key)
            guard role != .unknown else { continue }
            unnamed[key] = nil
            named(key, as: role)
        }
        guard !carriesHeartRate, measurementHandle == nil else { return }
        if observer.servers.values.contains(where: { !$0.valueHandles(of: .heartRateMeasurement).isEmpty }) { becomeHeartRate() }
    }

    /// The role the first pass saw `key` take at the end of its present stretch unnamed
    /// (second pass); nil when nothing named it (its notifications are then not used).
    private func laterRole(of key: ServerHandle) -> Role? {
        guard case .delivering(let foresight) = pass, let roles = foresight.laterRoles[key] else { return nil }
        let naming = namings[key, default: 0]
        return naming < roles.count ? roles[naming] : nil
    }

    /// `key`, unnamed until now, takes `role`: the first pass notes it for the second.
    private mutating func named(_ key: ServerHandle, as role: Role) {
        if case .learning = pass { laterRoles[key, default: []].append(role) }
        namings[key, default: 0] += 1
    }

    /// The link shows heart rate from now on.
    private mutating func becomeHeartRate() {
        carriesHeartRate = true
    }

    private var unannouncedNotice: RecordingEntry {
        .notice("\(id) was open before the capture began, so its peer's address is unknown; its samples are stored under the device \(device)")
    }

    /// Hands out a frame in the second pass, for a link that carries heart rate.
    private func emit(_ entry: RecordingEntry, into out: inout [RecordingEntry]) {
        if delivers { out.append(entry) }
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
