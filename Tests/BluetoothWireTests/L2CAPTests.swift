import BluetoothWire
import Testing

@Suite struct ACLPacketTests {
    @Test func readsHandleFlagsAndPayload() throws {
        let packet = try ACLPacket(decoding: [0x40, 0x20, 0x03, 0x00, 0xAA, 0xBB, 0xCC])
        #expect(packet.handle == 0x0040)
        #expect(packet.boundary == .first)
        #expect(packet.payload == [0xAA, 0xBB, 0xCC])
        #expect(packet.encoded == [0x40, 0x20, 0x03, 0x00, 0xAA, 0xBB, 0xCC])
        #expect(try ACLPacket(decoding: [0x40, 0x10, 0x01, 0x00, 0x01]).boundary == .continuation)
    }

    @Test func refusesALengthThatDisagrees() {
        #expect(throws: BluetoothWireError.self) { try ACLPacket(decoding: [0x40, 0x20, 0x03, 0x00, 0xAA]) }
        #expect(throws: BluetoothWireError.self) { try ACLPacket(decoding: [0x40, 0x20, 0x01, 0x00, 0xAA, 0xBB]) }
        #expect(throws: BluetoothWireError.self) { try ACLPacket(decoding: [0x40]) }
    }
}

@Suite struct L2CAPReassemblerTests {
    static let notification = L2CAPFrame(
        handle: 0x0040, channel: L2CAPFrame.attChannel,
        payload: ATTPDU.handleValueNotification(handle: 0x000C, value: [0x10, 0x48] + Array(repeating: 0x2C, count: 60)).encoded)

    /// Fed in fragments of every size, the same frame comes out once, at the last fragment.
    @Test(arguments: [1, 2, 3, 4, 5, 27, 251, 1000]) func putsFragmentsBackTogether(_ size: Int) {
        var reassembler = L2CAPReassembler()
        let packets = Self.notification.aclPackets(maximumPayload: size)
        for (index, packet) in packets.enumerated() {
            let (frame, problem) = reassembler.append(packet)
            #expect(problem == nil)
            #expect(frame == (index == packets.count - 1 ? Self.notification : nil))
        }
    }

    @Test func keepsConnectionsApart() {
        var reassembler = L2CAPReassembler()
        let other = L2CAPFrame(handle: 0x0041, channel: 4, payload: ATTPDU.handleValueNotification(handle: 0x0E, value: [0, 60]).encoded)
        let ours = Self.notification.aclPackets(maximumPayload: 27)
        var frames: [L2CAPFrame] = []
        for packet in [ours[0]] + other.aclPackets(maximumPayload: 3) + ours.dropFirst() {
            if let frame = reassembler.append(packet).frame { frames.append(frame) }
        }
        #expect(frames == [other, Self.notification])
    }

    @Test func dropsWhatCannotBeAFrameAndSaysWhy() {
        var reassembler = L2CAPReassembler(maximumFrameLength: 100)
        let packets = Self.notification.aclPackets(maximumPayload: 27)
        #expect(reassembler.append(packets[1]).problem == .continuationWithoutStart(handle: 0x40))
        _ = reassembler.append(packets[0])
        let restart = reassembler.append(packets[0])
        #expect(restart.problem == .unfinishedFrameDiscarded(handle: 0x40, missing: Self.notification.payload.count + 4 - 27))
        for packet in packets.dropFirst() { _ = reassembler.append(packet) }

        let long = L2CAPFrame(handle: 0x40, channel: 4, payload: Array(repeating: 0, count: 101))
        #expect(reassembler.append(long.aclPackets(maximumPayload: 200)[0]).problem == .overlong(handle: 0x40, length: 101))

        let excess = ACLPacket(handle: 0x40, boundary: .first, payload: [0x01, 0x00, 0x04, 0x00, 0xAA, 0xBB])
        #expect(reassembler.append(excess).problem == .excess(handle: 0x40, declared: 1, received: 2))
        #expect(reassembler.append(excess).frame == nil)
    }

    @Test func forgetsTheHalfFrameOfAClosedLink() {
        var reassembler = L2CAPReassembler()
        let packets = Self.notification.aclPackets(maximumPayload: 27)
        _ = reassembler.append(packets[0])
        reassembler.forget(handle: 0x40)
        #expect(reassembler.append(packets[1]).problem == .continuationWithoutStart(handle: 0x40))
    }
}

@Suite struct LESignalingTests {
    @Test func readsAConnectionParameterUpdateRequest() throws {
        // A strap asking for 7.5–15 ms, latency 0, timeout 4 s, as L2CAP carries it on CID 5.
        let bytes: [UInt8] = [0x12, 0x01, 0x08, 0x00, 0x06, 0x00, 0x0C, 0x00, 0x00, 0x00, 0x90, 0x01]
        let packet = try LESignalingPacket(decoding: bytes)
        let expected = ConnectionParameters(minimumInterval: 6, maximumInterval: 12, latency: 0, supervisionTimeout: 400)
        #expect(packet == .connectionParameterUpdateRequest(identifier: 1, expected))
        #expect(packet.encoded == bytes)
        #expect(try LESignalingPacket(decoding: [0x13, 0x01, 0x02, 0x00, 0x01, 0x00]) == .connectionParameterUpdateResponse(identifier: 1, accepted: false))
        #expect(throws: BluetoothWireError.self) { try LESignalingPacket(decoding: [0x12, 0x01, 0x08, 0x00, 0x06]) }
    }
}
