import BluetoothWire

/// A capture of one session with a heart-rate strap, taken on the host that connects to it
/// (central: requests sent, responses and notifications received), with what it holds.
///
/// The strap's GATT database (handles):
///
/// | service | declaration → value | characteristic |
/// |---|---|---|
/// | 1800 GAP 0x0001–0x0003 | 0x0002 → 0x0003 | 2A00 device name |
/// | 1801 GATT 0x0004–0x0007 | 0x0005 → 0x0006 (CCCD 0x0007) | 2A05 service changed |
/// | 180D heart rate 0x0008–0x000D | 0x0009 → 0x000A (CCCD 0x000B); 0x000C → 0x000D | 2A37, 2A38 |
/// | 180A device information 0x000E–0x0018 | 0x000F → 0x0010 … 0x0017 → 0x0018 | 2A29, 2A24, 2A27, 2A26, 2A28 |
/// | 180F battery 0x0019–0x001C | 0x001A → 0x001B (CCCD 0x001C) | 2A19 |
/// | vendor (128-bit) 0x001D–0x0020 | 0x001E → 0x001F (CCCD 0x0020) | 128-bit |
///
/// The session: scan, advertisement, LE Create Connection, LE Connection Complete, MTU
/// exchange, the discovery of every service, characteristic and the heart-rate CCCD (several
/// entries per response, responses cut into ACL packets), notifications switched on, reads of
/// the location, the device information strings and the battery, then one notification a
/// second (every fourth one long, with energy and nine RR intervals, so it spans two ACL
/// packets), a battery notification, and a disconnection.
public struct StrapCapture {
    public static let strap = BluetoothAddress("C8:3F:41:0A:9B:27")!
    public static let host = BluetoothAddress("00:1A:7D:DA:71:13")!
    /// 2026-03-01T09:00:00Z.
    public static let start: Int64 = 1_772_355_600_000_000

    public static let heartRateHandle: UInt16 = 0x000A
    public static let locationHandle: UInt16 = 0x000D
    public static let batteryHandle: UInt16 = 0x001B

    /// The device information the strap gives, by characteristic, with their value handles.
    public static let deviceInformation: [(uuid: UInt16, handle: UInt16, text: String)] = [
        (0x2A29, 0x0010, "Polar Electro Oy"), (0x2A24, 0x0012, "H10"), (0x2A27, 0x0014, "39044024.10"),
        (0x2A26, 0x0016, "5.0.0"), (0x2A28, 0x0018, "3.1.1"),
    ]
    public static let deviceName = "Polar H10 0A9B27"
    public static let battery: UInt8 = 87
    public static let laterBattery: UInt8 = 86
    /// Body Sensor Location: chest.
    public static let location: UInt8 = 1

    /// One notification the capture holds.
    public struct Measurement: Sendable, Equatable {
        /// When the host had it whole (the time of its last ACL packet), µs since the Unix epoch.
        public var time: Int64
        public var heartRate: UInt8
        /// Raw, 1/1024 s, oldest first.
        public var rrIntervals: [UInt16]
        public var energy: UInt16?

        /// The value as the strap sends it: flags (contact detected, energy, RR), rate, energy, RR.
        public var value: [UInt8] {
            var flags: UInt8 = 0b0000_0110
            if energy != nil { flags |= 0b1000 }
            if !rrIntervals.isEmpty { flags |= 0b1_0000 }
            var bytes: [UInt8] = [flags, heartRate]
            if let energy { bytes += le16(energy) }
            for interval in rrIntervals { bytes += le16(interval) }
            return bytes
        }
    }

    public var datalink: BTSnoopDatalink
    public var connectionHandle: UInt16 = 0x0040
    /// Whether the capture holds the connection's start (else it begins mid-connection).
    public var includesConnection = true
    /// Whether the capture holds the discovery and the reads (else it begins after them).
    public var includesDiscovery = true
    /// Whether LE Enhanced Connection Complete reports the connection.
    public var enhancedConnection = false
    public var notificationCount = 12
    /// Microseconds from the capture's start to the first notification.
    public var firstNotificationDelay: Int64 = 5_000_000
    public var aclPayload = 27

    public init(datalink: BTSnoopDatalink) {
        self.datalink = datalink
    }

    /// A capture that began after the connection and its discovery: the strap's notifications
    /// and the disconnection only.
    public static func lateStart(datalink: BTSnoopDatalink) -> StrapCapture {
        var capture = StrapCapture(datalink: datalink)
        capture.includesConnection = false
        capture.includesDiscovery = false
        return capture
    }

    /// The notifications of 2A37, in order.
    public var measurements: [Measurement] {
        (0..<notificationCount).map { index in
            let time = Self.start + firstNotificationDelay + Int64(index) * 1_000_000
            let rate = UInt8(60 + (index * 7) % 90)
            let interval = UInt16(60.0 / Double(rate) * 1024)
            if index % 4 == 3 {
                return Measurement(time: time, heartRate: rate, rrIntervals: Array(repeating: interval, count: 9), energy: UInt16(100 + index))
            }
            return Measurement(time: time, heartRate: rate, rrIntervals: [interval], energy: nil)
        }
    }

    /// The time of the disconnection.
    public var endTime: Int64 { Self.start + firstNotificationDelay + Int64(notificationCount) * 1_000_000 + 200_000 }

    /// A value the capture carries from the strap: a read's answer or a notification.
    public struct Value: Sendable, Equatable {
        /// When the host had it whole (its last ACL packet), µs since the Unix epoch.
        public var time: Int64
        public var handle: UInt16
        public var uuid: UInt16
        public var value: [UInt8]
    }

    /// The capture and what it holds.
    public struct Session {
        public var builder: CaptureBuilder
        public var bytes: [UInt8] { builder.bytes }
        /// The time of LE Connection Complete, when the capture holds it.
        public var connectedAt: Int64?
        /// Reads answered, in order (none when the capture begins after discovery).
        public var reads: [Value] = []
        /// Notifications, in order: the heart-rate measurements and one battery level.
        public var notifications: [Value] = []
        public var disconnectedAt: Int64
    }

    /// The capture.
    public func capture() -> [UInt8] { build().bytes }

    /// Builds the capture, noting what it holds.
    public func build() -> Session {
        var builder = CaptureBuilder(datalink: datalink, start: Self.start)
        builder.aclPayload = aclPayload
        let link = connectionHandle
        var session = Session(builder: builder, disconnectedAt: endTime)
        if datalink == .monitor { builder.monitorPreamble(address: Self.host) }
        if includesConnection {
            builder.scan(true)
            builder.advertisement(from: Self.strap, name: Self.deviceName)
            builder.scan(false)
            builder.createConnection(to: Self.strap)
            builder.wait(40_000)
            session.connectedAt = builder.connectionComplete(handle: link, peer: Self.strap, enhanced: enhancedConnection)
        }
        if includesDiscovery {
            builder.exchange(.exchangeMTURequest(mtu: 247), .exchangeMTUResponse(mtu: 232), on: link)
            Self.discover(&builder, on: link)
            builder.exchange(.writeRequest(handle: Self.heartRateHandle + 1, value: [0x01, 0x00]), .writeResponse, on: link)
            for read in Self.reads {
                let time = builder.exchange(.readRequest(handle: read.handle), .readResponse(value: read.value), on: link)
                session.reads.append(Value(time: time, handle: read.handle, uuid: read.uuid, value: read.value))
            }
        }
        for measurement in measurements {
            // The frame is whole, and the notification heard, at its last ACL packet.
            let notification = ATTPDU.handleValueNotification(handle: Self.heartRateHandle, value: measurement.value)
            let fragments = Int64(builder.aclPackets(notification, on: link, firstBoundary: .first).count)
            builder.clock = max(builder.clock, measurement.time - (fragments - 1) * builder.step)
            let time = builder.receive(notification, on: link)
            session.notifications.append(Value(time: time, handle: Self.heartRateHandle, uuid: 0x2A37, value: measurement.value))
        }
        let time = builder.receive(.handleValueNotification(handle: Self.batteryHandle, value: [Self.laterBattery]), on: link)
        session.notifications.append(Value(time: time, handle: Self.batteryHandle, uuid: 0x2A19, value: [Self.laterBattery]))
        builder.clock = max(builder.clock, endTime)
        builder.disconnectionComplete(handle: link)
        session.builder = builder
        return session
    }

    /// The reads after discovery: location, device name, device information, battery.
    static var reads: [(handle: UInt16, uuid: UInt16, value: [UInt8])] {
        [(locationHandle, 0x2A38, [location]), (0x0003, 0x2A00, Array(deviceName.utf8))]
            + deviceInformation.map { ($0.handle, $0.uuid, Array($0.text.utf8)) }
            + [(batteryHandle, 0x2A19, [battery])]
    }

    private static func discover(_ builder: inout CaptureBuilder, on link: UInt16) {
        let services: [(UInt16, UInt16, UInt16)] = [
            (0x0001, 0x0003, 0x1800), (0x0004, 0x0007, 0x1801), (0x0008, 0x000D, 0x180D), (0x000E, 0x0018, 0x180A),
            (0x0019, 0x001C, 0x180F),
        ]
        builder.exchange(
            .readByGroupTypeRequest(start: 0x0001, end: 0xFFFF, type: .primaryService),
            .readByGroupTypeResponse(services.map { ATTGroupValue(handle: $0.0, endGroup: $0.1, value: le16($0.2)) }), on: link)
        builder.exchange(
            .readByGroupTypeRequest(start: 0x001D, end: 0xFFFF, type: .primaryService),
            .readByGroupTypeResponse([ATTGroupValue(handle: 0x001D, endGroup: 0x0020, value: GATTTable.vendorService.littleEndian)]), on: link)
        builder.exchange(
            .readByGroupTypeRequest(start: 0x0021, end: 0xFFFF, type: .primaryService),
            .errorResponse(request: 0x10, handle: 0x0021, error: .attributeNotFound), on: link)

        let read: GATTCharacteristicProperties = .read
        var characteristics: [GATTCharacteristic] = [
            GATTCharacteristic(declarationHandle: 0x0002, properties: read, valueHandle: 0x0003, uuid: BluetoothUUID(0x2A00)),
            GATTCharacteristic(declarationHandle: 0x0005, properties: .indicate, valueHandle: 0x0006, uuid: BluetoothUUID(0x2A05)),
            GATTCharacteristic(declarationHandle: 0x0009, properties: .notify, valueHandle: heartRateHandle, uuid: .heartRateMeasurement),
            GATTCharacteristic(declarationHandle: 0x000C, properties: read, valueHandle: locationHandle, uuid: .bodySensorLocation),
        ]
        for (uuid, handle, _) in deviceInformation {
            characteristics.append(GATTCharacteristic(declarationHandle: handle - 1, properties: read, valueHandle: handle, uuid: BluetoothUUID(uuid)))
        }
        characteristics.append(
            GATTCharacteristic(declarationHandle: 0x001A, properties: [.read, .notify], valueHandle: batteryHandle, uuid: .batteryLevel))
        builder.exchange(
            .readByTypeRequest(start: 0x0001, end: 0xFFFF, type: .characteristicDeclaration),
            .readByTypeResponse(characteristics.map { ATTHandleValue(handle: $0.declarationHandle, value: $0.declarationValue) }), on: link)
        let vendor = GATTCharacteristic(declarationHandle: 0x001E, properties: [.write, .indicate], valueHandle: 0x001F, uuid: GATTTable.vendorService)
        builder.exchange(
            .readByTypeRequest(start: 0x001C, end: 0xFFFF, type: .characteristicDeclaration),
            .readByTypeResponse([ATTHandleValue(handle: vendor.declarationHandle, value: vendor.declarationValue)]), on: link)
        builder.exchange(
            .readByTypeRequest(start: 0x001F, end: 0xFFFF, type: .characteristicDeclaration),
            .errorResponse(request: 0x08, handle: 0x001F, error: .attributeNotFound), on: link)
        builder.exchange(
            .findInformationRequest(start: 0x000B, end: 0x000B),
            .findInformationResponse([ATTHandleUUID(handle: 0x000B, uuid: .clientCharacteristicConfiguration)]), on: link)
    }
}
