import BluetoothWire
import Testing

@Suite struct HCIEventTests {
    @Test func readsAnLEConnectionComplete() throws {
        let event = try HCIEvent(decoding: [
            0x3E, 0x13, 0x01, 0x00, 0x40, 0x00, 0x00, 0x01, 0x5F, 0x34, 0x12, 0xA1, 0x97, 0xF9, 0x18, 0x00, 0x00, 0x00, 0x48, 0x00, 0x00,
        ])
        let expected = LEConnectionComplete(
            status: 0, handle: 0x40, role: .central, peerAddressType: .random, peer: BluetoothAddress("F9:97:A1:12:34:5F")!,
            interval: 24, latency: 0, supervisionTimeout: 72)
        #expect(event == .leConnectionComplete(expected))
    }

    @Test func readsAnEnhancedConnectionComplete() throws {
        var parameters: [UInt8] = [0x0A, 0x00, 0x41, 0x00, 0x00, 0x00, 0x5F, 0x34, 0x12, 0x1A, 0x9E, 0xA0]
        parameters += Array(repeating: 0, count: 12) + [0x06, 0x00, 0x00, 0x00, 0xC8, 0x00, 0x00]
        let event = try HCIEvent(decoding: [0x3E, UInt8(parameters.count)] + parameters)
        guard case .leConnectionComplete(let complete) = event else { Issue.record("\(event)"); return }
        #expect(complete.handle == 0x41)
        #expect(complete.peerAddressType == .public)
        #expect(complete.interval == 6)
        #expect(complete.supervisionTimeout == 200)
    }

    @Test func readsTheEventsThatFollowALink() throws {
        #expect(try HCIEvent(decoding: [0x05, 0x04, 0x00, 0x40, 0x00, 0x08]) == .disconnectionComplete(status: 0, handle: 0x40, reason: 0x08))
        #expect(try HCIEvent(decoding: [0x0E, 0x04, 0x01, 0x0C, 0x20, 0x00]) == .commandComplete(opcode: 0x200C, returnParameters: [0x00]))
        #expect(try HCIEvent(decoding: [0x0F, 0x04, 0x0C, 0x01, 0x0D, 0x20]) == .commandStatus(status: 0x0C, opcode: 0x200D))
        #expect(
            try HCIEvent(decoding: [0x3E, 0x0A, 0x03, 0x00, 0x40, 0x00, 0x0C, 0x00, 0x00, 0x00, 0x90, 0x01])
                == .leConnectionUpdateComplete(status: 0, handle: 0x40, interval: 12, latency: 0, supervisionTimeout: 400))
        #expect(
            try HCIEvent(decoding: [0x3E, 0x0B, 0x06, 0x40, 0x00, 0x06, 0x00, 0x0C, 0x00, 0x00, 0x00, 0x90, 0x01])
                == .leRemoteConnectionParameterRequest(
                    handle: 0x40, ConnectionParameters(minimumInterval: 6, maximumInterval: 12, latency: 0, supervisionTimeout: 400)))
        #expect(try HCIEvent(decoding: [0x13, 0x01, 0x00]) == .other(code: 0x13, parameters: [0x00]))
        #expect(try HCIEvent(decoding: [0x3E, 0x02, 0x14, 0x00]) == .other(code: 0x3E, parameters: [0x14, 0x00]))
    }

    @Test func readsSeveralAdvertisingReportsInOneEvent() throws {
        let strap = AdvertisingData(structures: [
            .init(type: 0x01, data: [0x06]), .init(type: 0x03, data: [0x0D, 0x18, 0x0F, 0x18]), .init(type: 0x09, data: Array("HRM".utf8)),
        ])
        let other = AdvertisingData(structures: [.init(type: 0x01, data: [0x1A])])
        var parameters: [UInt8] = [0x02, 0x02]
        parameters += [0x00, 0x01] + BluetoothAddress("C0:11:22:33:44:55")!.littleEndian + [UInt8(strap.encoded.count)] + strap.encoded + [0xC4]
        parameters += [0x04, 0x00] + BluetoothAddress("00:22:D0:01:02:03")!.littleEndian + [UInt8(other.encoded.count)] + other.encoded + [0x7F]
        let event = try HCIEvent(decoding: [0x3E, UInt8(parameters.count)] + parameters)
        guard case .leAdvertisingReports(let reports) = event else { Issue.record("\(event)"); return }
        #expect(reports.count == 2)
        #expect(reports[0].address.description == "C0:11:22:33:44:55")
        #expect(reports[0].addressType == .random)
        #expect(reports[0].data.offersHeartRate)
        #expect(reports[0].data.localName == "HRM")
        #expect(reports[0].rssi == -60)
        #expect(reports[1].addressType == .public)
        #expect(!reports[1].data.offersHeartRate)
        #expect(reports[1].rssi == nil)
    }

    @Test func readsAnExtendedAdvertisingReport() throws {
        let data = AdvertisingData(structures: [.init(type: 0x02, data: [0x0D, 0x18]), .init(type: 0x08, data: Array("TICKR".utf8))])
        var parameters: [UInt8] = [0x0D, 0x01, 0x13, 0x00, 0x00] + BluetoothAddress("E1:02:03:04:05:06")!.littleEndian
        parameters += [0x01, 0x00, 0xFF, 0x7F, 0xB0, 0x00, 0x00, 0x00] + Array(repeating: 0, count: 6)
        parameters += [UInt8(data.encoded.count)] + data.encoded
        let event = try HCIEvent(decoding: [0x3E, UInt8(parameters.count)] + parameters)
        guard case .leAdvertisingReports(let reports) = event else { Issue.record("\(event)"); return }
        #expect(reports.map(\.address.description) == ["E1:02:03:04:05:06"])
        #expect(reports[0].data.localName == "TICKR")
        #expect(reports[0].rssi == -80)
        #expect(reports[0].eventType == 0x0013)
    }

    @Test func refusesTruncatedEvents() {
        for bytes: [UInt8] in [[], [0x05], [0x05, 0x04, 0x00, 0x40], [0x05, 0x03, 0x00, 0x40, 0x00, 0x08], [0x3E, 0x03, 0x01, 0x00, 0x40]] {
            #expect(throws: BluetoothWireError.self, "\(bytes)") { try HCIEvent(decoding: bytes) }
        }
        // An advertising report whose data runs past the event.
        #expect(throws: BluetoothWireError.self) {
            try HCIEvent(decoding: [0x3E, 0x0C, 0x02, 0x01, 0x00, 0x00, 1, 2, 3, 4, 5, 6, 0x1F, 0x02])
        }
    }
}

@Suite struct AdvertisingDataTests {
    @Test func stopsAtPaddingAndRefusesAnOverlongStructure() throws {
        let data = try AdvertisingData(decoding: [0x02, 0x01, 0x06, 0x03, 0x19, 0x41, 0x03, 0x00, 0x00, 0x00])
        #expect(data.structures.count == 2)
        #expect(data.appearance == 0x0341)
        #expect(data.localName == nil)
        #expect(throws: BluetoothWireError.self) { try AdvertisingData(decoding: [0x05, 0x09, 0x41]) }
    }

    @Test func listsSixteenAndOneHundredTwentyEightBitServices() throws {
        let nordic: [UInt8] = [0x9E, 0xCA, 0xDC, 0x24, 0x0E, 0xE5, 0xA9, 0xE0, 0x93, 0xF3, 0xA3, 0xB5, 0x01, 0x00, 0x40, 0x6E]
        let data = AdvertisingData(structures: [.init(type: 0x07, data: nordic), .init(type: 0x03, data: [0x0D, 0x18, 0x0A])])
        #expect(data.serviceUUIDs == [BluetoothUUID(littleEndian: nordic)!, .heartRateService])
        #expect(try AdvertisingData(decoding: data.encoded) == data)
    }
}

@Suite struct HCICommandTests {
    @Test func encodesScanCommandsAsHcitoolSendsThem() throws {
        // hcitool lescan: active, interval and window 0x0010, public address, accept all.
        #expect(HCICommand.leSetScanParameters(active: true, interval: 0x10, window: 0x10).encoded == [0x0B, 0x20, 0x07, 0x01, 0x10, 0x00, 0x10, 0x00, 0x00, 0x00])
        #expect(HCICommand.leSetScanEnable(true, filterDuplicates: true).encoded == [0x0C, 0x20, 0x02, 0x01, 0x01])
        let decoded = try HCICommand(decoding: [0x0C, 0x20, 0x02, 0x00, 0x00])
        #expect(decoded == .leSetScanEnable(false, filterDuplicates: false))
        #expect(decoded.ogf == 0x08 && decoded.ocf == 0x0C)
        #expect(throws: BluetoothWireError.self) { try HCICommand(decoding: [0x0C, 0x20, 0x02, 0x00]) }
    }

    @Test func acceptsWhatTheSpecAllowsAndRefusesTheRest() {
        let polarLike = ConnectionParameters(minimumInterval: 6, maximumInterval: 12, latency: 0, supervisionTimeout: 400)
        #expect(polarLike.isValid)
        #expect(
            ConnectionParameterAnswer.command(answering: 0x40, requested: polarLike).encoded
                == [0x20, 0x20, 0x0E, 0x40, 0x00, 0x06, 0x00, 0x0C, 0x00, 0x00, 0x00, 0x90, 0x01, 0x00, 0x00, 0x00, 0x00])
        let impossible = ConnectionParameters(minimumInterval: 12, maximumInterval: 6, latency: 0, supervisionTimeout: 400)
        #expect(!impossible.isValid)
        #expect(ConnectionParameterAnswer.command(answering: 0x40, requested: impossible).encoded == [0x21, 0x20, 0x03, 0x40, 0x00, 0x3B])
    }

    @Test func checksTheSpecLimits() {
        func valid(_ min: UInt16, _ max: UInt16, _ latency: UInt16, _ timeout: UInt16) -> Bool {
            ConnectionParameters(minimumInterval: min, maximumInterval: max, latency: latency, supervisionTimeout: timeout).isValid
        }
        #expect(valid(6, 3200, 0, 3200))
        #expect(!valid(5, 12, 0, 400))  // below 7.5 ms
        #expect(!valid(6, 3201, 0, 3200))  // above 4 s
        #expect(!valid(6, 12, 500, 3200))  // latency above 499
        #expect(!valid(6, 12, 0, 9))  // timeout below 100 ms
        #expect(!valid(6, 12, 0, 3201))  // timeout above 32 s
        #expect(!valid(6, 800, 9, 2000))  // 20 s ≤ 2 × 10 × 1 s: the link would time out while the strap may stay silent
        #expect(valid(6, 800, 8, 2000))  // 20 s > 2 × 9 × 1 s
        #expect(
            ConnectionParameters(minimumInterval: 6, maximumInterval: 12, latency: 0, supervisionTimeout: 400).description
                == "interval 7.50–15.00 ms, latency 0, timeout 4000 ms")
    }
}
