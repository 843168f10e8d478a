import ANTDecoding
import SensorFrames
import Timestamps

/// Drives one ANT USB stick: the reset, each receive channel's set-up, and what the stick's
/// messages mean for the straps it hears. Pure: feed it every message read and the time
/// (``receive(_:at:)``, and ``tick(at:)`` while the port is quiet); it answers with what to
/// write, which frames to hand on and which states to report.
///
/// Channels open one at a time, each searching for any heart-rate strap (device number 0),
/// with the straps already tracked on other channels in its exclusion list. When a channel
/// finds a strap, the next channel opens, up to ``Settings/channels``. A strap that goes
/// quiet makes the stick search for it again (EVENT_RX_FAIL_GO_TO_SEARCH); a search that
/// times out closes the channel, which is set up afresh and searches for any strap again.
/// Commands go one at a time, each answer checked; a command left unanswered is sent again,
/// and after ``Settings/attempts`` tries the session fails (the backend reopens the port).
struct ANTStickController {
    /// How the controller drives the stick.
    struct Settings: Sendable, Hashable {
        /// Channels to use (one strap each), at most the stick's 8.
        var channels = ANTChannelSetup.stickChannelCount
        var networkKey = ANTChannelSetup.antPlusNetworkKey
        /// How long to wait for the answer to one command.
        var responseTimeout = 1.0
        /// Tries per command before giving up on the stick.
        var attempts = 3
    }

    /// What the backend should do.
    enum Action: Sendable, Hashable {
        case write(ANTMessage)
        case frame(SensorFrame)
        case status(SensorID, SensorState)
        case log(String)
    }

    /// Why the stick cannot be used as it is (the backend reopens the port).
    enum Failure: Error, Sendable, Equatable, CustomStringConvertible {
        case noAnswer(command: ANTMessage, attempts: Int)
        case refused(ANTError)

        var description: String {
            switch self {
            case .noAnswer(let command, let attempts):
                command.id == ANTMessageID.reset
                    ? "the stick did not answer a reset (\(attempts) tries)"
                    : "the stick did not answer command \(command) (\(attempts) tries)"
            case .refused(let error): "\(error)"
            }
        }
    }

    /// Where one channel is.
    enum ChannelState: Sendable, Hashable {
        /// Not set up yet.
        case unused
        /// Its set-up commands are queued or in flight.
        case configuring
        /// Open and searching: for any strap, or for the one it tracked (`lost`).
        case searching(lost: UInt16?)
        /// Receiving `deviceNumber`'s broadcasts.
        case tracking(deviceNumber: UInt16)
        /// Closing because it found a strap another channel already tracks.
        case closing
    }

    let settings: Settings
    let transport: SensorTransport = .ant
    /// The stick's own name for statuses (`ant:/dev/ttyUSB0`).
    let stickID: SensorID
    private(set) var channels: [ChannelState]
    private var queue: [ANTMessage] = []
    private var pending: (command: ANTMessage, sentAt: Timestamp, attempts: Int)?
    private var started = false

    init(stickID: SensorID, settings: Settings = Settings()) {
        self.settings = settings
        self.stickID = stickID
        self.channels = Array(repeating: .unused, count: max(1, min(settings.channels, ANTChannelSetup.stickChannelCount)))
    }

    /// The device name for frames from strap `deviceNumber`.
    static func sensorID(deviceNumber: UInt16) -> SensorID { SensorID("ant-\(deviceNumber)") }

    /// Resets the stick; the channel set-up follows its startup message.
    mutating func start(at time: Timestamp) -> [Action] {
        started = true
        queue = [.reset]
        var actions: [Action] = [.status(stickID, .connecting)]
        sendNext(at: time, into: &actions)
        return actions
    }

    /// Handles one message from the stick.
    mutating func receive(_ message: ANTMessage, at time: Timestamp) throws(Failure) -> [Action] {
        var actions: [Action] = []
        if let pending {
            let answered: Bool
            do {
                answered = try ANTChannelSetup.check(message, answers: pending.command)
            } catch {
                throw .refused(error)
            }
            if answered {
                commandAnswered(pending.command, into: &actions)
                self.pending = nil
                sendNext(at: time, into: &actions)
                return actions
            }
        }
        switch message.id {
        case ANTMessageID.broadcastData, ANTMessageID.legacyExtendedBroadcastData:
            broadcast(message, at: time, into: &actions)
        case ANTMessageID.channelEvent:
            if let response = ChannelResponse(message), response.isEvent {
                channelEvent(response, at: time, into: &actions)
            }
        case ANTMessageID.serialError:
            actions.append(.log("the stick reported a serial error \(message); a command may have been garbled"))
        default:
            break
        }
        sendNext(at: time, into: &actions)
        return actions
    }

    /// Checks the command in flight for a timeout: sends it again, or fails after the last try.
    mutating func tick(at time: Timestamp) throws(Failure) -> [Action] {
        guard let pending, time >= pending.sentAt.advanced(bySeconds: settings.responseTimeout) else { return [] }
        guard pending.attempts < settings.attempts else {
            throw .noAnswer(command: pending.command, attempts: pending.attempts)
        }
        self.pending = (pending.command, time, pending.attempts + 1)
        return [.write(pending.command)]
    }

    /// The frames and states to send when the session ends (the port closed or failed).
    func finish(at time: Timestamp, reason: String) -> [Action] {
        var actions: [Action] = []
        for case .tracking(let number) in channels {
            let device = Self.sensorID(deviceNumber: number)
            actions.append(.frame(SensorFrame(time: time, transport: transport, device: device, kind: .disconnected)))
            actions.append(.status(device, .stopped(reason: reason)))
        }
        return actions
    }

    // MARK: - Commands

    private mutating func sendNext(at time: Timestamp, into actions: inout [Action]) {
        guard pending == nil, !queue.isEmpty else { return }
        let command = queue.removeFirst()
        pending = (command, time, 1)
        actions.append(.write(command))
    }

    private mutating func commandAnswered(_ command: ANTMessage, into actions: inout [Action]) {
        switch command.id {
        case ANTMessageID.reset:
            actions.append(.log("ANT stick reset; opening channel 0"))
            configure(channel: 0, firstTime: true)
        case ANTMessageID.openChannel:
            let channel = Int(command.payload[0])
            if channels.indices.contains(channel), channels[channel] == .configuring {
                channels[channel] = .searching(lost: nil)
                actions.append(.status(stickID, .searching))
            }
        default:
            break
        }
    }

    /// Queues the set-up of `channel`: the whole sequence the first time, afterwards only
    /// what a channel needs (the key and extended messages are the stick's, set once).
    private mutating func configure(channel: Int, firstTime: Bool) {
        channels[channel] = .configuring
        var commands = ANTChannelSetup.heartRateReceiveChannel(channel: UInt8(channel), networkKey: settings.networkKey)
        if !firstTime {
            commands.removeAll { $0.id == ANTMessageID.networkKey || $0.id == ANTMessageID.enableExtendedMessages }
        }
        if let open = commands.firstIndex(where: { $0.id == ANTMessageID.openChannel }) {
            commands.insert(contentsOf: exclusionList(channel: UInt8(channel), replacingEarlierList: false), at: open)
        }
        queue += commands
    }

    /// Sets a closed channel up again to search for any strap (not those on other channels).
    private mutating func reconfigureClosed(channel: Int) {
        let number = UInt8(channel)
        channels[channel] = .configuring
        queue.append(.setChannelID(number, deviceNumber: 0, deviceType: ANTChannelSetup.heartRateDeviceType, transmissionType: 0))
        queue += exclusionList(channel: number, replacingEarlierList: true)
        queue.append(.openChannel(number))
    }

    /// The commands that keep `channel` from finding the straps other channels track: each
    /// strap added to its list, then the list made an exclusion list of that size. With
    /// nothing tracked, a fresh channel needs no list, but one set up again must have its
    /// earlier list emptied.
    private func exclusionList(channel: UInt8, replacingEarlierList: Bool) -> [ANTMessage] {
        let excluded = trackedDeviceNumbers.prefix(Self.exclusionListSize)
        if excluded.isEmpty && !replacingEarlierList { return [] }
        let entries = excluded.enumerated().map { index, device in
            Self.addToExclusionList(channel: channel, deviceNumber: device, index: UInt8(index))
        }
        return entries + [Self.configureExclusionList(channel: channel, size: UInt8(excluded.count))]
    }

    /// ANT's inclusion/exclusion list holds at most 4 channel ids.
    static let exclusionListSize = 4

    /// Add channel id to list (0x59): `[channel, device number LE, type, transmission type, index]`.
    static func addToExclusionList(channel: UInt8, deviceNumber: UInt16, index: UInt8) -> ANTMessage {
        ANTMessage(
            id: 0x59,
            payload: [channel, UInt8(deviceNumber & 0xFF), UInt8(deviceNumber >> 8), ANTChannelSetup.heartRateDeviceType, 0, index])
    }

    /// Configure inclusion/exclusion list (0x5A): `[channel, size, 1 = exclude]`.
    static func configureExclusionList(channel: UInt8, size: UInt8) -> ANTMessage {
        ANTMessage(id: 0x5A, payload: [channel, size, 1])
    }

    private var trackedDeviceNumbers: [UInt16] {
        channels.compactMap { if case .tracking(let number) = $0 { number } else { nil } }
    }

    // MARK: - Messages from the straps

    private mutating func broadcast(_ message: ANTMessage, at time: Timestamp, into actions: inout [Action]) {
        guard let data = try? BroadcastData(message), channels.indices.contains(Int(data.channel)) else {
            actions.append(.log("ignored ANT message \(message): not broadcast data on a channel hrmd opened"))
            return
        }
        let channel = Int(data.channel)
        switch channels[channel] {
        case .tracking(let number):
            let sender = data.deviceNumber ?? number
            guard sender == number else {
                // The channel now hears another strap: the old one is gone.
                lose(channel: channel, deviceNumber: number, at: time, into: &actions)
                pair(channel: channel, deviceNumber: sender, message: message, at: time, into: &actions)
                return
            }
            actions.append(.frame(frame(number, .notify, message, at: time)))
        case .searching(let lost):
            guard let sender = data.deviceNumber ?? lost else {
                actions.append(.log("channel \(channel) hears a strap but the stick does not name it (no extended data); ignored"))
                return
            }
            pair(channel: channel, deviceNumber: sender, message: message, at: time, into: &actions)
        case .unused, .configuring, .closing:
            break
        }
    }

    private mutating func pair(channel: Int, deviceNumber: UInt16, message: ANTMessage, at time: Timestamp, into actions: inout [Action]) {
        if let other = channels.indices.first(where: { $0 != channel && channels[$0] == .tracking(deviceNumber: deviceNumber) }) {
            actions.append(.log("channel \(channel) found strap \(deviceNumber), which channel \(other) tracks; searching for another"))
            channels[channel] = .closing
            queue.append(.closeChannel(UInt8(channel)))
            return
        }
        channels[channel] = .tracking(deviceNumber: deviceNumber)
        let device = Self.sensorID(deviceNumber: deviceNumber)
        actions.append(.log("ANT+ strap \(deviceNumber) found on channel \(channel)"))
        actions.append(.frame(SensorFrame(time: time, transport: transport, device: device, kind: .connected)))
        actions.append(.status(device, .streaming))
        actions.append(.frame(frame(deviceNumber, .notify, message, at: time)))
        openNextChannelIfAllTracking()
    }

    /// Opens the next unused channel once every channel in use tracks a strap.
    private mutating func openNextChannelIfAllTracking() {
        let allTracking = channels.allSatisfy { if case .tracking = $0 { true } else { $0 == .unused } }
        guard queue.isEmpty, allTracking, let next = channels.firstIndex(of: .unused) else { return }
        configure(channel: next, firstTime: false)
    }

    private func lose(channel: Int, deviceNumber: UInt16, at time: Timestamp, into actions: inout [Action]) {
        let device = Self.sensorID(deviceNumber: deviceNumber)
        actions.append(.frame(SensorFrame(time: time, transport: transport, device: device, kind: .disconnected)))
        actions.append(.status(device, .searching))
    }

    private mutating func channelEvent(_ event: ChannelResponse, at time: Timestamp, into actions: inout [Action]) {
        let channel = Int(event.channel)
        guard channels.indices.contains(channel) else { return }
        switch event.code {
        case .rxFailGoToSearch:
            if case .tracking(let number) = channels[channel] {
                actions.append(.log("ANT+ strap \(number) went quiet; channel \(channel) searches for it again"))
                lose(channel: channel, deviceNumber: number, at: time, into: &actions)
                channels[channel] = .searching(lost: number)
            }
        case .channelClosed:
            if case .tracking(let number) = channels[channel] {
                lose(channel: channel, deviceNumber: number, at: time, into: &actions)
            }
            if case .searching(let lost?) = channels[channel] {
                actions.append(.log("ANT+ strap \(lost) not found again; channel \(channel) searches for any strap"))
                actions.append(.status(Self.sensorID(deviceNumber: lost), .stopped(reason: "not heard for a whole search")))
            }
            reconfigureClosed(channel: channel)
        default:
            break
        }
    }

    private func frame(_ deviceNumber: UInt16, _ kind: FrameKind, _ message: ANTMessage, at time: Timestamp) -> SensorFrame {
        SensorFrame(time: time, transport: transport, device: Self.sensorID(deviceNumber: deviceNumber), kind: kind, value: message.encoded())
    }
}
