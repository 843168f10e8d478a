import BluetoothWire
import Foundation
import Recordings
import SensorFrames
import TestSupport
import Testing
import Timestamps

/// What a recording gave, in a form tests compare.
struct ReadCapture {
    var frames: [SensorFrame] = []
    /// The record number of each frame.
    var records: [Int] = []
    var badRecords: [(record: Int, reason: String)] = []
    var notices: [String] = []
    var unusable: [String] = []

    init(_ bytes: [UInt8], handle: UInt16? = nil) throws {
        var recording = try BTSnoopRecording(bytes: bytes, name: "capture", options: .init(measurementHandle: handle))
        while let entry = recording.next() {
            switch entry {
            case .frame(let frame, let record):
                frames.append(frame)
                records.append(record)
            case .badRecord(let record, let reason): badRecords.append((record, reason))
            case .notice(let text): notices.append(text)
            case .unusable(let reason): unusable.append(reason)
            case .badLine(let line, let reason): Issue.record("a capture gave a bad line \(line): \(reason)")
            }
        }
        #expect(recording.bytesRead == bytes.count)
    }
}

@Suite("btsnoop captures as recordings")
struct BTSnoopRecordingTests {
    static let strap = SensorID(StrapCapture.strap.description)

    /// The frames a session should give: connected, the reads, the notifications, disconnected.
    static func expectedFrames(_ session: StrapCapture.Session, device: SensorID = strap) -> [SensorFrame] {
        func frame(_ kind: FrameKind, _ uuid: UInt16?, _ value: [UInt8], _ time: Int64) -> SensorFrame {
            SensorFrame(
                time: Timestamp(microsecondsSinceEpoch: time), transport: .ble, device: device, kind: kind,
                characteristic: uuid.map { CharacteristicID(rawValue: $0) }, value: value)
        }
        var frames = session.connectedAt.map { [frame(.connected, nil, [], $0)] } ?? []
        frames += session.reads.map { frame(.read, $0.uuid, $0.value, $0.time) }
        frames += session.notifications.map { frame(.notify, $0.uuid, $0.value, $0.time) }
        frames.append(frame(.disconnected, nil, [], session.disconnectedAt))
        return frames
    }

    @Test("every datalink gives the strap's session: connected, reads, notifications at the capture's times, disconnected",
          arguments: BTSnoopDatalink.allCases)
    func wholeSession(_ datalink: BTSnoopDatalink) throws {
        var capture = StrapCapture(datalink: datalink)
        capture.enhancedConnection = datalink == .monitor
        let session = capture.build()
        let read = try ReadCapture(session.bytes)
        #expect(read.badRecords.isEmpty && read.notices.isEmpty && read.unusable.isEmpty)
        #expect(read.frames == Self.expectedFrames(session))
        #expect(read.records == read.records.sorted(), "frames come in capture order")
        // The reads include the location and every Device Information string.
        #expect(read.frames.filter { $0.kind == .read }.map { $0.characteristic?.rawValue } == [0x2A38, 0x2A00, 0x2A29, 0x2A24, 0x2A27, 0x2A26, 0x2A28, 0x2A19])
    }

    @Test("a capture that begins after the discovery: the one handle whose notifications decode as heart rate, and notices")
    func afterDiscovery() throws {
        let capture = StrapCapture.lateStart(datalink: .uart)
        let session = capture.build()
        let read = try ReadCapture(session.bytes)
        let device = LinkID(handle: 0x40).unannouncedDevice
        #expect(device == "hci-conn-0x0040")
        // The battery notification (one byte) is no heart-rate measurement: it is not taken.
        var expected = Self.expectedFrames(session, device: device)
        expected.removeAll { $0.characteristic == .batteryLevel }
        #expect(read.frames == expected)
        #expect(read.badRecords.isEmpty && read.unusable.isEmpty)
        #expect(read.notices.count == 2)
        #expect(read.notices.contains { $0.contains("no GATT discovery of handle 0x000a") && $0.contains("its 12 notifications") && $0.contains("--handle") })
        #expect(read.notices.contains { $0.contains("open before the capture began") && $0.contains("hci-conn-0x0040") })
    }

    @Test("a host with the strap's attributes cached: the connection is known, the handle guessed")
    func cachedAttributes() throws {
        var capture = StrapCapture(datalink: .monitor)
        capture.includesDiscovery = false
        let session = capture.build()
        let read = try ReadCapture(session.bytes)
        var expected = Self.expectedFrames(session)
        expected.removeAll { $0.characteristic == .batteryLevel }
        #expect(read.frames == expected)
        #expect(read.notices.count == 1)
        #expect(read.notices.first?.hasPrefix("connection 0x0040 on hci0 (C8:3F:41:0A:9B:27): the capture holds no GATT discovery") == true)
    }

    @Test("--handle names the measurement handle: no guess; against discovery it wins and says so")
    func namedHandle() throws {
        let capture = StrapCapture.lateStart(datalink: .uart)
        let session = capture.build()
        let named = try ReadCapture(session.bytes, handle: StrapCapture.heartRateHandle)
        #expect(named.notices.count == 1, "only the device's name: \(named.notices)")
        #expect(named.frames.filter { $0.characteristic == .heartRateMeasurement }.count == capture.notificationCount)
        #expect(!named.frames.contains { $0.characteristic == .batteryLevel })

        let full = StrapCapture(datalink: .uart).build()
        let against = try ReadCapture(full.bytes, handle: StrapCapture.batteryHandle)
        #expect(against.notices.count == 1)
        #expect(against.notices.first?.contains("discovery says handle 0x001b is characteristic 2a19, not 0x2A37") == true)
        let measurements = against.frames.filter { $0.characteristic == .heartRateMeasurement }
        #expect(measurements.map(\.value) == [[StrapCapture.laterBattery]])
    }

    @Test("two handles that could both be heart rate: none is stored, and the handles are named")
    func ambiguous() throws {
        var builder = CaptureBuilder(datalink: .uart, start: StrapCapture.start)
        for beat in 0..<4 {
            builder.receive(.handleValueNotification(handle: 0x000A, value: [0x00, UInt8(60 + beat)]), on: 0x40)
            builder.receive(.handleValueNotification(handle: 0x0030, value: [0x10, 0x50, 0x00, 0x04]), on: 0x40)
            builder.receive(.handleValueNotification(handle: 0x0040, value: [0x64]), on: 0x40)
        }
        let read = try ReadCapture(builder.bytes)
        #expect(read.frames.isEmpty)
        #expect(read.unusable.count == 1)
        #expect(read.unusable.first?.contains("0x000a: 4, 0x0030: 4") == true)
        #expect(read.unusable.first?.contains("--handle") == true)
        #expect(read.notices == ["the capture holds no heart-rate measurements"])
    }

    @Test("a device without a heart-rate characteristic gives nothing")
    func otherDevices() throws {
        var builder = CaptureBuilder(datalink: .uart, start: StrapCapture.start)
        let lamp = BluetoothAddress("11:22:33:44:55:66")!
        builder.connectionComplete(handle: 0x41, peer: lamp)
        let battery = GATTCharacteristic(declarationHandle: 0x20, properties: [.read, .notify], valueHandle: 0x21, uuid: .batteryLevel)
        builder.exchange(
            .readByTypeRequest(start: 1, end: 0xFFFF, type: .characteristicDeclaration),
            .readByTypeResponse([ATTHandleValue(handle: 0x20, value: battery.declarationValue)]), on: 0x41)
        builder.exchange(.readRequest(handle: 0x21), .readResponse(value: [40]), on: 0x41)
        builder.receive(.handleValueNotification(handle: 0x21, value: [39]), on: 0x41)
        builder.disconnectionComplete(handle: 0x41)
        let read = try ReadCapture(builder.bytes)
        #expect(read.frames.isEmpty && read.unusable.isEmpty && read.badRecords.isEmpty)
        #expect(read.notices == ["the capture holds no heart-rate measurements"])
    }

    @Test("two straps at once, on two links and on two controllers, each under its own address")
    func severalLinks() throws {
        let second = BluetoothAddress("E1:02:03:04:05:06")!
        var builder = CaptureBuilder(datalink: .monitor, start: StrapCapture.start)
        builder.monitorPreamble(address: StrapCapture.host)
        builder.connectionComplete(handle: 0x40, peer: StrapCapture.strap)
        builder.controller = 1
        builder.connectionComplete(handle: 0x40, peer: second)
        for controller: UInt16 in [0, 1] {
            builder.controller = controller
            builder.exchange(
                .findInformationRequest(start: 0x0A, end: 0x0B),
                .findInformationResponse([ATTHandleUUID(handle: 0x0A, uuid: .heartRateMeasurement), ATTHandleUUID(handle: 0x0B, uuid: .clientCharacteristicConfiguration)]),
                on: 0x40)
        }
        builder.aclPayload = 8
        for beat in 0..<3 {
            for controller: UInt16 in [0, 1] {
                builder.controller = controller
                builder.receive(.handleValueNotification(handle: 0x0A, value: [0x10, UInt8(70 + beat + Int(controller) * 20), 0x00, 0x03, 0x00, 0x03]), on: 0x40)
            }
        }
        builder.controller = 1
        builder.disconnectionComplete(handle: 0x40)
        let read = try ReadCapture(builder.bytes)
        #expect(read.badRecords.isEmpty && read.notices.isEmpty)
        let rates = { (device: SensorID) in read.frames.filter { $0.device == device && $0.kind == .notify }.map { $0.value[1] } }
        #expect(rates(Self.strap) == [70, 71, 72])
        #expect(rates(SensorID(second.description)) == [90, 91, 92])
        #expect(read.frames.filter { $0.kind == .disconnected }.map(\.device) == [SensorID(second.description)])
    }

    @Test("a handle reused by another strap after a disconnection belongs to the new one")
    func reconnection() throws {
        let second = BluetoothAddress("E1:02:03:04:05:06")!
        var builder = CaptureBuilder(datalink: .uart, start: StrapCapture.start)
        for peer in [StrapCapture.strap, second] {
            builder.connectionComplete(handle: 0x40, peer: peer)
            builder.discoverMeasurement(at: 0x0A, on: 0x40)
            builder.receive(.handleValueNotification(handle: 0x0A, value: [0x00, 66]), on: 0x40)
            builder.disconnectionComplete(handle: 0x40)
        }
        let read = try ReadCapture(builder.bytes)
        #expect(read.frames.map(\.kind) == [.connected, .notify, .disconnected, .connected, .notify, .disconnected])
        #expect(read.frames.map(\.device) == [Self.strap, Self.strap, Self.strap] + Array(repeating: SensorID(second.description), count: 3))
    }

    @Test("notifications that come before the discovery ends (a bonded strap) are kept, in capture order")
    func notificationsBeforeDiscovery() throws {
        var builder = CaptureBuilder(datalink: .uart, start: StrapCapture.start)
        builder.connectionComplete(handle: 0x40, peer: StrapCapture.strap)
        builder.receive(.handleValueNotification(handle: 0x0A, value: [0x00, 61]), on: 0x40)
        builder.exchange(.readRequest(handle: 0x0D), .readResponse(value: [0x01]), on: 0x40)
        let characteristics = [
            GATTCharacteristic(declarationHandle: 0x09, properties: .notify, valueHandle: 0x0A, uuid: .heartRateMeasurement),
            GATTCharacteristic(declarationHandle: 0x0C, properties: .read, valueHandle: 0x0D, uuid: .bodySensorLocation),
        ]
        builder.receive(.handleValueNotification(handle: 0x0A, value: [0x00, 62]), on: 0x40)
        builder.exchange(
            .readByTypeRequest(start: 1, end: 0xFFFF, type: .characteristicDeclaration),
            .readByTypeResponse(characteristics.map { ATTHandleValue(handle: $0.declarationHandle, value: $0.declarationValue) }), on: 0x40)
        builder.receive(.handleValueNotification(handle: 0x0A, value: [0x00, 63]), on: 0x40)
        let read = try ReadCapture(builder.bytes)
        // The read came before the discovery named 0x000D: it cannot be told what it read.
        #expect(read.frames.map(\.kind) == [.connected, .notify, .notify, .notify])
        #expect(read.frames.dropFirst().map { $0.value[1] } == [61, 62, 63])
        #expect(read.records == read.records.sorted())
        #expect(read.notices.isEmpty)
    }

    @Test("a truncated capture: the last record is bad, by number; what came before is whole")
    func truncated() throws {
        let session = StrapCapture(datalink: .uart).build()
        let read = try ReadCapture(Array(session.bytes.dropLast(3)))
        #expect(read.badRecords.map(\.record) == [session.builder.recordCount])
        #expect(read.badRecords.first?.reason == "truncated: 7 bytes announced, the file ends after 4")
        #expect(read.frames == Array(Self.expectedFrames(session).dropLast()), "all but the disconnection")
    }

    /// The byte offset of record `number` (from 1) in a capture.
    static func offset(ofRecord number: Int, in bytes: [UInt8]) -> Int {
        CaptureBuilder.records(in: bytes)[number - 1].offset
    }

    @Test("damaged records: bad by number; a corrupt length ends the reading; the rest is read")
    func damagedRecords() throws {
        let session = StrapCapture(datalink: .uart).build()
        let count = session.builder.recordCount
        var bytes = session.bytes
        // Record 20: an unknown H4 packet type. Record 30: an ACL packet whose length disagrees.
        bytes[Self.offset(ofRecord: 20, in: bytes) + 24] = 0x09
        let acl = Self.offset(ofRecord: 30, in: bytes)
        #expect(bytes[acl + 24] == 0x02, "record 30 is ACL data")
        bytes[acl + 24 + 3] &+= 1
        // The second-to-last record: a corrupt length.
        let last = Self.offset(ofRecord: count - 1, in: bytes)
        bytes.replaceSubrange(last + 4..<last + 8, with: be32(0x0100_0000))
        let read = try ReadCapture(bytes)
        #expect(read.badRecords.map(\.record) == [20, 30, count - 1])
        #expect(read.badRecords[0].reason == "unknown H4 packet type 0x9")
        #expect(read.badRecords[1].reason.contains("ACL packet"))
        #expect(read.badRecords[2].reason.hasPrefix("corrupt length"))
        // The heart-rate notifications all came before the damage at the end; the battery
        // notification (the damaged record) and the disconnection after it are lost.
        #expect(read.frames.filter { $0.characteristic == .heartRateMeasurement && $0.kind == .notify }.count == 12)
        #expect(!read.frames.contains { $0.characteristic == .batteryLevel && $0.kind == .notify })
        #expect(!read.frames.contains { $0.kind == .disconnected })
    }

    @Test("an ATT PDU that does not decode and a stray ACL continuation are bad records")
    func badTraffic() throws {
        var builder = CaptureBuilder(datalink: .uart, start: StrapCapture.start)
        builder.connectionComplete(handle: 0x40, peer: StrapCapture.strap)
        builder.discoverMeasurement(at: 0x0A, on: 0x40)
        builder.record(.aclReceived(ACLPacket(handle: 0x40, boundary: .first, payload: [0x02, 0x00, 0x04, 0x00, 0x1B, 0x0A]).encoded))
        let badATT = builder.recordCount
        builder.record(.aclReceived(ACLPacket(handle: 0x40, boundary: .continuation, payload: [0x00, 0x48]).encoded))
        let stray = builder.recordCount
        builder.receive(.handleValueNotification(handle: 0x0A, value: [0x00, 72]), on: 0x40)
        let read = try ReadCapture(builder.bytes)
        #expect(read.badRecords.map(\.record) == [badATT, stray])
        #expect(read.badRecords[0].reason.contains("ATT PDU 0x1b"))
        #expect(read.badRecords[1].reason.contains("continuation without a start"))
        #expect(read.frames.map(\.kind) == [.connected, .notify])
    }

    @Test("packets the capturing tool cut short and packets it lost are told")
    func cutAndDropped() throws {
        var builder = CaptureBuilder(datalink: .uart, start: StrapCapture.start)
        builder.connectionComplete(handle: 0x40, peer: StrapCapture.strap)
        builder.discoverMeasurement(at: 0x0A, on: 0x40)
        let whole = builder.aclPackets(.handleValueNotification(handle: 0x0A, value: [0x00, 70]), on: 0x40, firstBoundary: .first)[0].encoded
        builder.record(.aclReceived(Array(whole.prefix(6))), leftOut: whole.count - 6)
        builder.receive(.handleValueNotification(handle: 0x0A, value: [0x00, 71]), on: 0x40)
        var writer = BTSnoopWriter(datalink: .uart)
        var reader = try BTSnoopReader(builder.bytes)
        while case .record(let record)? = reader.next() {
            try writer.append(record.packet, unixMicroseconds: record.unixMicroseconds, leftOut: record.bytesLeftOut, cumulativeDrops: record.number > 3 ? 2 : 0)
        }
        let read = try ReadCapture(writer.bytes)
        #expect(read.badRecords.isEmpty)
        #expect(read.frames.filter { $0.kind == .notify }.map { $0.value[1] } == [71])
        #expect(read.notices == [
            "1 ACL packets were stored cut short by the capturing tool; the ATT PDUs they carried are lost",
            "the capturing tool lost 2 packets (cumulative drops)",
        ])
    }

    @Test("told apart by content; a header that is not btsnoop 1 is a damaged recording")
    func kindAndHeader() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("capture.log")
        try Data(StrapCapture(datalink: .uart).capture()).write(to: URL(fileURLWithPath: path))
        #expect(try TraceRecording.kind(of: path) == .btsnoop)
        let entries = Array(try RecordingSource.entries(of: path))
        #expect(entries.count == 23)
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        defer { close(fd) }
        #expect(try TraceRecording.kind(ofDescriptor: fd, name: "capture") == .btsnoop)
        var fromDescriptor = try BTSnoopRecording(descriptor: fd, name: "capture")
        var count = 0
        while fromDescriptor.next() != nil { count += 1 }
        #expect(count == 23)

        let unsupported = BTSnoop.magic + be32(1) + be32(1004)
        #expect {
            try BTSnoopRecording(bytes: unsupported, name: "h5.log")
        } throws: { error in
            guard case RecordingError.damaged(let path, let reason) = error else { return false }
            return path == "h5.log" && reason.contains("datalink 1004")
        }
    }

    @Test("nothing waits for a link's end: an undiscovered strap's notifications come as their records come, in order")
    func deliveredAsRead() throws {
        var capture = StrapCapture.lateStart(datalink: .uart)
        capture.notificationCount = 200
        let bytes = capture.capture()
        var recording = try BTSnoopRecording(bytes: bytes, name: "capture")
        var firstNotification: Int?
        var records: [Int] = []
        while let entry = recording.next() {
            guard case .frame(let frame, let record) = entry, frame.kind == .notify else { continue }
            if firstNotification == nil { firstNotification = recording.bytesRead }
            records.append(record)
        }
        #expect(records.count == 200)
        #expect(records == records.sorted())
        #expect(try #require(firstNotification) < bytes.count / 10, "the first notification came after \(firstNotification!) of \(bytes.count) bytes")
    }

    @Test("a capture many windows long gives the same entries from its path as from memory")
    func longCapture() throws {
        var capture = StrapCapture(datalink: .monitor)
        capture.includesDiscovery = false
        capture.notificationCount = 1_000
        let bytes = capture.capture()
        #expect(bytes.count > 10 * 4096)
        let directory = try TemporaryDirectory()
        let path = directory.file("long.btsnoop")
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let fromMemory = try ReadCapture(bytes)
        let fromFile = Array(try BTSnoopRecording(source: FileBytes.open(path: path, windowSize: 4096), name: path))
        let frames = fromFile.compactMap { if case .frame(let frame, _) = $0 { frame } else { nil } }
        #expect(frames.count == fromMemory.frames.count)
        #expect(frames == fromMemory.frames)
        #expect(frames.filter { $0.kind == .notify }.count == 1_000)
    }
}
