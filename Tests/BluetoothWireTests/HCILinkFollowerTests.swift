import BluetoothWire
import TestSupport
import Testing

@Suite struct HCILinkFollowerTests {
    static let strap = BluetoothAddress("C8:3F:41:0A:9B:27")!
    static let long = ATTPDU.handleValueNotification(handle: 0x000A, value: [0x1E, 80, 0x64, 0x00] + [UInt8](repeating: 0x03, count: 18))

    /// Every event and problem `packets` give, in order.
    static func follow(_ packets: [(BTSnoopPacket, UInt16?)], into follower: inout HCILinkFollower) -> (events: [LinkEvent], problems: [LinkProblem]) {
        var events: [LinkEvent] = [], problems: [LinkProblem] = []
        for (packet, controller) in packets {
            let (event, problem) = follower.follow(packet, controller: controller)
            if let event { events.append(event) }
            if let problem { problems.append(problem) }
        }
        return (events, problems)
    }

    static func received(_ pdu: ATTPDU, handle: UInt16 = 0x40, size: Int = 27) -> [BTSnoopPacket] {
        CaptureBuilder.aclPackets(pdu, on: handle, firstBoundary: .first, maximumPayload: size).map { .aclReceived($0.encoded) }
    }

    static func sent(_ pdu: ATTPDU, handle: UInt16 = 0x40, size: Int = 27) -> [BTSnoopPacket] {
        CaptureBuilder.aclPackets(pdu, on: handle, firstBoundary: .firstNonFlushable, maximumPayload: size).map { .aclSent($0.encoded) }
    }

    static let connectionComplete: BTSnoopPacket = .event(
        [0x3E, 19, 0x01, 0x00, 0x40, 0x00, 0x00, 0x00] + strap.littleEndian + [0x18, 0x00, 0x00, 0x00, 0xF4, 0x01, 0x00])

    @Test func followsAConnectionFromCompleteToDisconnection() {
        var follower = HCILinkFollower()
        let link = LinkID(handle: 0x40)
        // A request sent and a long notification received interleave their fragments on one handle.
        let request = Self.sent(.readRequest(handle: 0x000D), size: 3)
        let notification = Self.received(Self.long, size: 8)
        var packets: [(BTSnoopPacket, UInt16?)] = [(Self.connectionComplete, nil)]
        for index in 0..<max(request.count, notification.count) {
            if index < request.count { packets.append((request[index], nil)) }
            if index < notification.count { packets.append((notification[index], nil)) }
        }
        packets.append((.event([0x05, 0x04, 0x00, 0x40, 0x00, 0x13]), nil))
        let (events, problems) = Self.follow(packets, into: &follower)
        #expect(problems.isEmpty)
        guard case .connected(link, let complete) = events.first else {
            Issue.record("no connection: \(events)")
            return
        }
        #expect(complete.peer == Self.strap && complete.handle == 0x40)
        #expect(Array(events.dropFirst()) == [
            .att(link, .readRequest(handle: 0x000D), from: .local),
            .att(link, Self.long, from: .remote),
            .disconnected(link, reason: 0x13),
        ])
    }

    @Test func aLinkOpenBeforeTheCaptureIsFollowedFromItsFirstFrameStart() {
        var follower = HCILinkFollower()
        let packets = Self.received(Self.long, size: 8)
        // The capture begins with the last two fragments of a frame, then a whole one.
        let (events, problems) = Self.follow(Array(packets.suffix(2) + packets).map { ($0, nil) }, into: &follower)
        #expect(problems.isEmpty)
        #expect(events == [.att(LinkID(handle: 0x40), Self.long, from: .remote)])
        // From then on a stray continuation is a problem.
        let stray = Self.follow([(packets[1], nil)], into: &follower)
        #expect(stray.problems == [.reassembly(LinkID(handle: 0x40), .continuationWithoutStart(handle: 0x40))])
    }

    @Test func controllersWithTheSameHandleStayApart() {
        var follower = HCILinkFollower()
        let first = Self.received(Self.long, size: 8)
        let second = Self.received(.handleValueNotification(handle: 0x000A, value: [0, 61]), size: 4)
        let packets = zip(first, second).flatMap { [($0, UInt16(0)), ($1, UInt16(1))] as [(BTSnoopPacket, UInt16?)] }
            + first.dropFirst(second.count).map { ($0, UInt16(0)) }
        let (events, problems) = Self.follow(packets, into: &follower)
        #expect(problems.isEmpty)
        #expect(events == [
            .att(LinkID(controller: 1, handle: 0x40), .handleValueNotification(handle: 0x000A, value: [0, 61]), from: .remote),
            .att(LinkID(controller: 0, handle: 0x40), Self.long, from: .remote),
        ])
        #expect(LinkID(controller: 1, handle: 0x40).description == "connection 0x0040 on hci1")
    }

    @Test func saysWhatCannotBeFollowed() {
        var follower = HCILinkFollower()
        let link = LinkID(handle: 0x40)
        _ = follower.follow(Self.connectionComplete)
        #expect(follower.follow(.event([0x3E, 19, 0x01])).problem.map { if case .badEvent = $0 { true } else { false } } == true)
        #expect(follower.follow(.aclReceived([0x40, 0x20, 0x09, 0x00, 0x01])).problem.map { if case .badACLPacket = $0 { true } else { false } } == true)
        let notATT = L2CAPFrame(handle: 0x40, channel: 4, payload: [0x1B, 0x0A]).aclPackets().map { BTSnoopPacket.aclReceived($0.encoded) }
        #expect(follower.follow(notATT[0]).problem.map { if case .badATTPDU(link, _) = $0 { true } else { false } } == true)
        // A cut packet loses its frame; the continuations after it are dropped quietly.
        let packets = Self.received(Self.long, size: 8)
        let cut = follower.follow(.aclReceived(Array(packets[0].payloadBytes.prefix(6))), bytesLeftOut: 6)
        #expect(cut.problem == .cutACLPacket(link))
        for packet in packets.dropFirst() { #expect(follower.follow(packet) == (nil, nil)) }
        // Other channels (LE signaling) are not ATT.
        let signaling = L2CAPFrame(handle: 0x40, channel: 5, payload: [0x12, 0x01, 0x08, 0x00, 6, 0, 12, 0, 0, 0, 0x90, 1])
        #expect(follower.follow(.aclReceived(signaling.aclPackets()[0].encoded)) == (nil, nil))
        // A failed connection and a failed disconnection are no events.
        #expect(follower.follow(.event([0x05, 0x04, 0x0C, 0x40, 0x00, 0x13])) == (nil, nil))
    }
}

extension BTSnoopPacket {
    fileprivate var payloadBytes: [UInt8] {
        switch self {
        case .aclReceived(let bytes), .aclSent(let bytes), .command(let bytes), .event(let bytes), .other(_, let bytes): bytes
        default: []
        }
    }
}
