import BluetoothWire
import TestSupport
import Testing

@Suite struct BTSnoopTests {
    /// 2026-03-01T09:00:00Z.
    static let time: Int64 = 1_772_355_600_000_000
    static let acl: [UInt8] = [0x40, 0x20, 0x05, 0x00, 0x01, 0x00, 0x04, 0x00, 0x1E]

    static func records(_ bytes: [UInt8]) throws -> [BTSnoopItem] { Array(try BTSnoopReader(bytes)) }

    @Test func writesTheHeaderAndRecordsAsWiresharkAndBlueZDo() throws {
        var writer = BTSnoopWriter(datalink: .uart)
        try writer.append(.aclReceived(Self.acl), unixMicroseconds: 0)
        let bytes = writer.bytes
        #expect(Array(bytes[0..<16]) == Array("btsnoop".utf8) + [0, 0, 0, 0, 1, 0, 0, 0x03, 0xEA])
        // original and included length (type byte + packet), flags (received), drops
        #expect(Array(bytes[16..<32]) == be32(10) + be32(10) + be32(1) + be32(0))
        // Unix time 0 is Wireshark's KUnixTimeBase
        #expect(Array(bytes[32..<40]) == [0x00, 0xDC, 0xDD, 0xB3, 0x0F, 0x2F, 0x80, 0x00])
        #expect(Array(bytes[40...]) == [0x02] + Self.acl)
        // BlueZ counts from 2000-01-01 with 0x00E03AB44A676000.
        #expect(BTSnoop.captureTime(unixMicroseconds: 946_684_800_000_000) == 0x00E0_3AB4_4A67_6000)
    }

    @Test("H1 and H4 flags: bit 0 controller to host, bit 1 command or event; monitor flags: index << 16 | opcode")
    func writesTheFlagsOfEachDatalink() throws {
        let packets: [BTSnoopPacket] = [.command([0x0C, 0x20, 0x02, 0x01, 0x01]), .event([0x0E, 0x01, 0x01]), .aclSent(Self.acl), .aclReceived(Self.acl)]
        for (datalink, expected) in [(BTSnoopDatalink.hci, [2, 3, 0, 1]), (.uart, [2, 3, 0, 1]), (.monitor, [0x2_0002, 0x2_0003, 0x2_0004, 0x2_0005])] as [(BTSnoopDatalink, [UInt32])] {
            var writer = BTSnoopWriter(datalink: datalink)
            for packet in packets { try writer.append(packet, unixMicroseconds: Self.time, controller: 2) }
            var offset = 16
            for (packet, flags) in zip(packets, expected) {
                #expect(Array(writer.bytes[offset + 8..<offset + 12]) == be32(flags), "\(datalink) \(packet)")
                let length = Int(writer.bytes[offset + 4..<offset + 8].reduce(0) { $0 << 8 | UInt32($1) })
                offset += 24 + length
            }
        }
    }

    @Test(arguments: BTSnoopDatalink.allCases) func readsBackWhatItWrites(_ datalink: BTSnoopDatalink) throws {
        var packets: [BTSnoopPacket] = [.command([0x0C, 0x20, 0x02, 0x01, 0x01]), .event([0x0E, 0x04, 0x01, 0x0C, 0x20, 0x00]), .aclSent(Self.acl), .aclReceived(Self.acl)]
        if datalink == .monitor {
            packets = [.note("Bluetooth subsystem version 2.22"), .controllerAdded(address: BluetoothAddress("00:1A:7D:DA:71:13"), name: "hci0")]
                + packets + [.other(opcode: MonitorOpcode.openIndex, []), .controllerRemoved]
        }
        if datalink == .uart { packets.append(.other(opcode: MonitorOpcode.scoReceived, [0x01, 0x00, 0x00])) }
        var writer = BTSnoopWriter(datalink: datalink)
        for (index, packet) in packets.enumerated() {
            try writer.append(packet, unixMicroseconds: Self.time + Int64(index) * 1_250, controller: 1, leftOut: index == 3 ? 7 : 0, cumulativeDrops: UInt32(index))
        }
        #expect(writer.recordCount == packets.count)
        var reader = try BTSnoopReader(writer.bytes)
        #expect(reader.datalink == datalink)
        for (index, packet) in packets.enumerated() {
            guard case .record(let record) = reader.next() else {
                Issue.record("record \(index + 1) did not read")
                return
            }
            #expect(record == BTSnoopRecord(
                number: index + 1, unixMicroseconds: Self.time + Int64(index) * 1_250, controller: datalink == .monitor ? 1 : nil,
                packet: packet, bytesLeftOut: index == 3 ? 7 : 0, cumulativeDrops: UInt32(index)))
        }
        #expect(reader.next() == nil)
        #expect(reader.offset == writer.bytes.count)
    }

    @Test func refusesWhatCannotBeWrittenInADatalink() {
        var h4 = BTSnoopWriter(datalink: .uart)
        #expect(throws: BluetoothWireError.self) { try h4.append(.note("hello"), unixMicroseconds: Self.time) }
        var h1 = BTSnoopWriter(datalink: .hci)
        #expect(throws: BluetoothWireError.self) { try h1.append(.other(opcode: MonitorOpcode.scoSent, [0]), unixMicroseconds: Self.time) }
        #expect(h1.recordCount == 0 && h1.bytes.count == 16)
    }

    @Test func refusesWhatIsNoCaptureItCanRead() throws {
        #expect(throws: BTSnoopError.notBTSnoop) { try BTSnoopReader(Array(#"{"format":"hrmd-trace"}"#.utf8)) }
        #expect(throws: BTSnoopError.truncatedHeader(got: 5)) { try BTSnoopReader(Array("btsno".utf8)) }
        #expect(throws: BTSnoopError.truncatedHeader(got: 12)) { try BTSnoopReader(BTSnoop.magic + be32(1)) }
        #expect(throws: BTSnoopError.unsupportedVersion(2)) { try BTSnoopReader(BTSnoop.magic + be32(2) + be32(1002)) }
        #expect(throws: BTSnoopError.unsupportedDatalink(1004)) { try BTSnoopReader(BTSnoop.magic + be32(1) + be32(1004)) }
        #expect(BTSnoopError.unsupportedDatalink(1004).description.contains("1004"))
        #expect(try Self.records(BTSnoop.magic + be32(1) + be32(2001)).isEmpty)
    }

    /// Three good records around the damage.
    func capture(damaging: (inout [UInt8], _ secondRecord: Int) -> Void) throws -> [BTSnoopItem] {
        var writer = BTSnoopWriter(datalink: .uart)
        for index in 0..<3 { try writer.append(.aclReceived(Self.acl), unixMicroseconds: Self.time + Int64(index)) }
        var bytes = writer.bytes
        damaging(&bytes, 16 + 24 + 10)
        return try Self.records(bytes)
    }

    func damage(_ items: [BTSnoopItem]) -> [BTSnoopDamage] {
        items.compactMap { if case .damaged(let damage) = $0 { damage } else { nil } }
    }

    @Test func aTruncatedLastRecordIsReportedWithItsNumber() throws {
        let items = try capture { bytes, _ in bytes.removeLast(4) }
        #expect(items.count == 3)
        let damage = damage(items)
        #expect(damage == [BTSnoopDamage(record: 3, problem: .truncatedData(included: 10, got: 6))])
        #expect(damage.first?.endsCapture == true)
        #expect(damage.first?.description == "record 3: truncated: 10 bytes announced, the file ends after 6")

        let cutHeader = try capture { bytes, _ in bytes.removeLast(10 + 14) }
        #expect(self.damage(cutHeader) == [BTSnoopDamage(record: 3, problem: .truncatedHeader(got: 10))])
    }

    @Test func aCorruptLengthStopsTheReadingAndSaysWhy() throws {
        let tooLong = try capture { bytes, second in
            bytes.replaceSubrange(second..<second + 8, with: be32(200_000) + be32(200_000))
        }
        #expect(tooLong.count == 2)
        #expect(damage(tooLong) == [BTSnoopDamage(record: 2, problem: .corruptLength(included: 200_000, original: 200_000))])
        #expect(damage(tooLong).first?.description.contains("corrupt length") == true)

        let aboveOriginal = try capture { bytes, second in bytes.replaceSubrange(second..<second + 4, with: be32(3)) }
        #expect(damage(aboveOriginal) == [BTSnoopDamage(record: 2, problem: .corruptLength(included: 10, original: 3))])
        #expect(aboveOriginal.count == 2)
    }

    @Test func damageConfinedToARecordSkipsIt() throws {
        let unknownType = try capture { bytes, second in bytes[second + 24] = 0x07 }
        #expect(unknownType.count == 3)
        #expect(damage(unknownType) == [BTSnoopDamage(record: 2, problem: .unknownPacketType(7))])

        let zeroTime = try capture { bytes, second in bytes.replaceSubrange(second + 16..<second + 24, with: [UInt8](repeating: 0, count: 8)) }
        #expect(damage(zeroTime) == [BTSnoopDamage(record: 2, problem: .timeBeforeUnixEpoch(captureTime: 0))])
        #expect(zeroTime.count == 3 && damage(zeroTime).first?.endsCapture == false)

        var writer = BTSnoopWriter(datalink: .uart)
        try writer.append(.aclReceived(Self.acl), unixMicroseconds: Self.time)
        var empty = writer.bytes
        empty.replaceSubrange(16..<24, with: be32(0) + be32(0))
        empty.removeLast(10)
        #expect(try Self.records(empty) == [.damaged(BTSnoopDamage(record: 1, problem: .emptyPacket))])

        var monitor = BTSnoopWriter(datalink: .monitor)
        try monitor.append(.other(opcode: MonitorOpcode.newIndex, [0, 0, 1, 2]), unixMicroseconds: Self.time)
        #expect(try Self.records(monitor.bytes) == [.damaged(BTSnoopDamage(record: 1, problem: .shortMonitorRecord(opcode: 0, needed: 16, got: 4)))])
    }

    @Test func aCaptureBuiltWithRealFramingReadsWhole() throws {
        for datalink in BTSnoopDatalink.allCases {
            let session = StrapCapture(datalink: datalink).build()
            let items = try Self.records(session.bytes)
            #expect(items.count == session.builder.recordCount)
            #expect(damage(items).isEmpty)
        }
    }
}
