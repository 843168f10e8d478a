import BluetoothWire
import Logging
import SensorBackend
import SensorFrames
import Timestamps

/// How a strap's link ended.
public enum StrapLinkEnd: Sendable, Hashable {
    /// The task was cancelled (hrmd is stopping).
    case cancelled
    /// The link ended, and why; `streamed` says whether notifications had started.
    case ended(reason: String, streamed: Bool)
}

/// One link of one connected strap over ATT, from MTU exchange to the end of the link: the
/// GATT procedure of the HCI backend, sending the frames the BlueZ backend sends for the same
/// strap.
public struct StrapLink: Sendable {
    /// The ATT_MTU asked for: the largest whose PDU, with the 4-byte L2CAP header, fits one LE
    /// data packet of 251 bytes (Data Length Extension), so nothing is fragmented, and any
    /// Device Information string up to 246 bytes comes in one Read. A Heart Rate Measurement
    /// needs no more than the default 23 (the profile keeps it within the MTU).
    static let preferredMTU = 247

    let client: ATTClient
    let device: SensorID
    let sink: FrameSink
    let logger: Logger

    /// A link over `client` (connected to the strap `device`, its address) sending into `sink`.
    public init(client: ATTClient, device: SensorID, sink: FrameSink, logger: Logger = Logger(label: "hrmd.hci")) {
        self.client = client
        self.device = device
        self.sink = sink
        self.logger = logger
    }

    /// Exchanges MTU, discovers the Heart Rate, Device Information and Battery services, sends the
    /// `connected` frame, the reads (2a38, the 180A strings, 2a19) as `read` frames, enables
    /// notifications (CCCD writes), calls `onStreaming` once, then sends each 2a37 notification as a
    /// `notify` frame (transport .ble, the device's address as SensorID, arrival time) and battery
    /// notifications as `read` 2a19 frames, until the link closes or the task is cancelled; sends
    /// `disconnected` when `connected` was sent. Closes the client before returning.
    ///
    /// A read the strap refuses is logged and skipped; one that needs pairing (Insufficient
    /// Authentication or Encryption), like such a refusal of the 2a37 CCCD write, ends the link:
    /// this backend cannot pair. Notifications that come before discovery is done (a bonded strap
    /// may still have them on) wait in the client and are sent once the 2a37 handle is known.
    public func run(onStreaming: @Sendable () -> Void) async -> StrapLinkEnd {
        var connected = false
        let ending = await withTaskCancellationHandler {
            do throws(LinkEnding) {
                let gatt = GATTClient(att: client, logger: logger)
                let profile = try await discover(gatt)
                send(.connected)
                connected = true
                try await readInformation(profile, gatt)
                let handles = try await subscribe(profile, gatt)
                onStreaming()
                return await stream(handles)
            } catch {
                return error
            }
        } onCancel: {
            client.close()
        }
        if connected { send(.disconnected) }
        client.close()
        if client.discardedPDUs > 0 {
            logger.notice("\(device): \(client.discardedPDUs) ATT PDUs discarded (malformed, oversized, unanswerable or not taken in time)")
        }
        return Task.isCancelled ? .cancelled : .ended(reason: ending.reason, streamed: ending.streamed)
    }

    // MARK: Steps

    private func discover(_ gatt: GATTClient) async throws(LinkEnding) -> StrapProfile {
        do {
            let mtu = try await gatt.exchangeMTU(asking: min(Self.preferredMTU, client.maximumPDU))
            logger.debug("\(device): ATT_MTU \(mtu)")
            return try await StrapProfile.discover(with: gatt)
        } catch {
            throw ending(error, "service discovery")
        }
    }

    /// Reads the body sensor location, the device information strings and the battery level.
    private func readInformation(_ profile: StrapProfile, _ gatt: GATTClient) async throws(LinkEnding) {
        for characteristic in profile.informationReads + [profile.batteryLevel?.0].compactMap({ $0 }) {
            guard let short = characteristic.uuid.short else { continue }
            let id = CharacteristicID(rawValue: short)
            do {
                send(.read, id, try await gatt.read(characteristic.valueHandle))
            } catch {
                guard case .errorResponse(_, _, let code) = error, !Self.needsPairing(code) else { throw ending(error, "reading \(id)") }
                logger.info("\(device): reading \(id) failed: \(code)")
            }
        }
    }

    /// The handles whose notifications are passed on.
    private struct StreamedHandles {
        var measurement: UInt16
        var battery: UInt16?
    }

    /// Switches on Battery Level notifications when it notifies (a refusal is logged: heart rate
    /// still flows), then Heart Rate Measurement's, last, so streaming starts as they do; a strap
    /// without them ends the link.
    private func subscribe(_ profile: StrapProfile, _ gatt: GATTClient) async throws(LinkEnding) -> StreamedHandles {
        guard let (measurement, heartRate) = profile.measurement else {
            throw LinkEnding(reason: "the strap has no Heart Rate Measurement characteristic")
        }
        var battery: UInt16?
        if let (level, service) = profile.batteryLevel, !level.properties.isDisjoint(with: [.notify, .indicate]) {
            do {
                try await enableUpdates(of: level, in: service, gatt)
                battery = level.valueHandle
            } catch {
                if client.endReason != nil { throw error }
                logger.notice("\(device): battery notifications stay off: \(error.reason)")
            }
        }
        try await enableUpdates(of: measurement, in: heartRate, gatt)
        return StreamedHandles(measurement: measurement.valueHandle, battery: battery)
    }

    /// Writes `characteristic`'s Client Characteristic Configuration: notifications, or
    /// indications when it only indicates (the client confirms them).
    private func enableUpdates(
        of characteristic: GATTCharacteristic, in service: DiscoveredService, _ gatt: GATTClient
    ) async throws(LinkEnding) {
        let name = characteristic.uuid.description
        let configuration: [UInt8]
        if characteristic.properties.contains(.notify) {
            configuration = [0x01, 0x00]
        } else if characteristic.properties.contains(.indicate) {
            configuration = [0x02, 0x00]
        } else {
            throw LinkEnding(reason: "\(name) neither notifies nor indicates")
        }
        var descriptors: [ATTHandleUUID] = []
        if let range = service.descriptorRange(of: characteristic) {
            do {
                descriptors = try await gatt.descriptors(in: range)
            } catch {
                throw ending(error, "finding the descriptors of \(name)")
            }
        }
        guard let cccd = descriptors.first(where: { $0.uuid == .clientCharacteristicConfiguration }) else {
            throw LinkEnding(reason: "\(name) has no Client Characteristic Configuration descriptor")
        }
        do {
            try await gatt.write(configuration, to: cccd.handle)
        } catch {
            throw ending(error, "enabling \(name) notifications")
        }
    }

    /// Sends the measurement notifications (those that came during discovery first) and battery
    /// levels until the link ends.
    private func stream(_ handles: StreamedHandles) async -> LinkEnding {
        for await notification in client.notifications {
            if notification.handle == handles.measurement {
                send(.notify, .heartRateMeasurement, notification.value, at: notification.time)
            } else if notification.handle == handles.battery {
                send(.read, .batteryLevel, notification.value, at: notification.time)
            } else {
                logger.debug("\(device): ignored a notification of handle \(hexCode(notification.handle))")
            }
        }
        return LinkEnding(reason: client.endReason.map { Self.linkEnd($0) } ?? "the link closed", streamed: true)
    }

    // MARK: Frames and reasons

    private func send(_ kind: FrameKind, _ characteristic: CharacteristicID? = nil, _ value: [UInt8] = [], at time: Timestamp = .now()) {
        sink.send(SensorFrame(time: time, transport: .ble, device: device, kind: kind, characteristic: characteristic, value: value))
    }

    /// The errors that mean the strap wants an encrypted, paired link.
    static func needsPairing(_ code: ATTErrorCode) -> Bool {
        [.insufficientAuthentication, .insufficientEncryption, .insufficientEncryptionKeySize].contains(code)
    }

    /// Why the link ends after `error` while `doing` something.
    private func ending(_ error: ATTClientError, _ doing: String) -> LinkEnding {
        if case .errorResponse(_, _, let code) = error, Self.needsPairing(code) {
            return LinkEnding(reason: "the strap requires pairing (\(code) \(doing)); the hci backend cannot pair: "
                + "pair the strap once with bluetoothctl, or use the ble backend")
        }
        switch error {
        case .closed, .io, .timeout: return LinkEnding(reason: "\(Self.linkEnd(error)) (\(doing))")
        default: return LinkEnding(reason: "\(doing): \(error)")
        }
    }

    /// How the link ended, said plainly.
    private static func linkEnd(_ error: ATTClientError) -> String {
        switch error {
        case .closed: "the strap closed the link"
        case .io(let failure): "the link failed: \(failure)"
        default: error.description
        }
    }
}

/// How a link ends, thrown from the step where it did.
struct LinkEnding: Error {
    var reason: String
    var streamed = false
}
