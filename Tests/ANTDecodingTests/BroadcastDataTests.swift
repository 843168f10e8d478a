import ANTDecoding
import Testing

@Suite("Broadcast data, with and without the sender's channel id")
struct BroadcastDataTests {
    @Test("a real flagged extended broadcast names its strap")
    func flaggedExtended() throws {
        let broadcast = try BroadcastData(try ANTMessage(frame: RealCapture.frames[0]))
        #expect(broadcast.channel == 2)
        #expect(broadcast.data == [0x84, 0xFF, 0xA5, 0xE2, 0xA5, 0xE6, 0xCA, 0x3C])
        #expect(broadcast.deviceNumber == 25170)
        #expect(broadcast.deviceType == ANTChannelSetup.heartRateDeviceType)
        #expect(broadcast.transmissionType == 0x71)
    }

    @Test("plain broadcast data has no channel id")
    func plain() throws {
        let broadcast = try BroadcastData(ANTMessage(id: 0x4E, payload: [1, 0, 1, 2, 3, 4, 5, 6, 7]))
        #expect(broadcast == BroadcastData(channel: 1, data: [0, 1, 2, 3, 4, 5, 6, 7]))
        #expect(broadcast.deviceNumber == nil && broadcast.deviceType == nil && broadcast.transmissionType == nil)
    }

    @Test("a flag byte without the device-id bit gives no channel id")
    func flagWithoutDeviceID() throws {
        // Flag 0x40: RSSI fields follow, not the device id.
        let broadcast = try BroadcastData(ANTMessage(id: 0x4E, payload: [1, 0, 1, 2, 3, 4, 5, 6, 7, 0x40, 0x20, 0xC4, 0xB0]))
        #expect(broadcast.deviceNumber == nil)
        #expect(broadcast.data == [0, 1, 2, 3, 4, 5, 6, 7])
    }

    @Test("the device id comes first when RSSI and timestamp are flagged too")
    func flaggedWithMore() throws {
        let payload: [UInt8] = [4, 0, 1, 2, 3, 4, 5, 6, 7, 0xE0, 0x39, 0x30, 120, 1, 0x20, 0xC4, 0xB0, 0x10, 0x27]
        let broadcast = try BroadcastData(ANTMessage(id: 0x4E, payload: payload))
        #expect(broadcast == BroadcastData(channel: 4, data: [0, 1, 2, 3, 4, 5, 6, 7], deviceNumber: 12345, deviceType: 120, transmissionType: 1))
    }

    @Test("legacy extended broadcast (0x5D) puts the channel id before the data")
    func legacyExtended() throws {
        let payload: [UInt8] = [2, 0x52, 0x62, 0x78, 0x71, 0x84, 0xFF, 0xA5, 0xE2, 0xA5, 0xE6, 0xCA, 0x3C]
        let broadcast = try BroadcastData(ANTMessage(id: ANTMessageID.legacyExtendedBroadcastData, payload: payload))
        let flagged = try BroadcastData(try ANTMessage(frame: RealCapture.frames[0]))
        #expect(broadcast == flagged)
    }

    @Test("other messages and short payloads throw")
    func failures() {
        #expect(throws: ANTError.notBroadcastData(messageID: 0x40)) {
            try BroadcastData(try ANTMessage(frame: RealCapture.frames[4]))
        }
        #expect(throws: ANTError.payloadTooShort(messageID: 0x4E, count: 8, needed: 9)) {
            try BroadcastData(ANTMessage(id: 0x4E, payload: [0, 1, 2, 3, 4, 5, 6, 7]))
        }
        #expect(throws: ANTError.payloadTooShort(messageID: 0x4E, count: 12, needed: 14)) {
            try BroadcastData(ANTMessage(id: 0x4E, payload: [0, 1, 2, 3, 4, 5, 6, 7, 8, 0x80, 0x39, 0x30]))
        }
        #expect(throws: ANTError.payloadTooShort(messageID: 0x5D, count: 9, needed: 13)) {
            try BroadcastData(ANTMessage(id: 0x5D, payload: [0, 1, 2, 3, 4, 5, 6, 7, 8]))
        }
    }
}
