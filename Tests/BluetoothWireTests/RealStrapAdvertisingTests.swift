import BluetoothWire
import Testing

/// LE Advertising Report events built, byte for byte, from what real straps were seen to
/// advertise in public captures, and what hrmd reads from them.
///
/// A Polar H10 splits what it says over two PDUs: its ADV_IND lists the Heart Rate service
/// (0x180D, with Polar's 0xFEEE) but carries no name; its SCAN_RSP carries the name
/// ("Polar H10 <device id>") and Polar's manufacturer data but no service list. A scanner sees
/// the name only when it scans actively, and must not ask a scan response for 0x180D.
///
/// Sources:
/// - AD structures, address and RSSI of the first strap: the ESP32 Arduino BLE debug log in
///   espressif/arduino-esp32 issue 6063 ("Polar H10 6BE1772A", f9:97:a1:c6:b4:da, -76 dBm);
///   Heltec-Aaron-Lee/WiFi_Kit_series issue 239 logs another H10 with the same structures in
///   the same order (flags 06; incomplete 16-bit list 0d18eefe; TX power 04; manufacturer data
///   6b00…; complete name). That stack hands advertising data and scan response on as one
///   (39 bytes here, more than one PDU holds).
/// - Which structures travel in which PDU: custom-components/ble_monitor issue 985, which
///   parses one HCI report at a time, logged an H10 report holding the manufacturer data and
///   the name and no 16-bit UUID list; FleXoft/Polar-H7-HRM (README.md and the H10 log in its
///   issue 1), scanning for the Heart Rate service with CoreBluetooth, was first told of the
///   strap without a name, then with one. Flags must be in the ADV_IND. Where the TX power level travels the
///   sources do not settle (either PDU has room); it is put in the ADV_IND here.
/// - The second strap: a BlueZ/bleak scan result recorded in jarpy/Fitorio, fitorio/main.py
///   at commit f88e1a2 ("Polar H10 DF243120" at A0:9E:1A:DF:24:31, manufacturer data
///   3f000052 after company 107, services 180d and feee, TX power 4, -62 dBm). bleak gives
///   values, not AD types, so its values are laid out as the first strap's.
/// - Address types are not printed by these tools; they follow from the addresses. F9:97:…
///   has its two top bits set, a random static address. A0:9E:1A is Polar Electro's IEEE
///   prefix (Wireshark's manuf list), and a random address may not begin with the bits 10, so that one is public:
///   H10s are met with either kind.
@Suite struct RealStrapAdvertisingTests {
    /// Legacy advertising event types as the report gives them (Core spec Vol 4 Part E 7.7.65.2).
    enum EventType {
        static let connectableUndirected: UInt16 = 0x00  // ADV_IND
        static let scanResponse: UInt16 = 0x04  // SCAN_RSP
    }

    /// The ADV_IND of both H10s: flags (LE general discoverable, no BR/EDR), an incomplete
    /// list of 16-bit services (Heart Rate 0x180D, Polar 0xFEEE), TX power level +4 dBm.
    static let h10Advertisement: [UInt8] = [0x02, 0x01, 0x06, 0x05, 0x02, 0x0D, 0x18, 0xEE, 0xFE, 0x02, 0x0A, 0x04]

    /// Flattens an event written in labelled parts.
    static func event(_ parts: [UInt8]...) -> [UInt8] { Array(parts.joined()) }

    /// The one report an LE Advertising Report event carries, or nil if it carries another
    /// number or is another event.
    static func onlyReport(of event: [UInt8]) throws -> AdvertisingReport? {
        guard case .leAdvertisingReports(let reports) = try HCIEvent(decoding: event), reports.count == 1 else { return nil }
        return reports[0]
    }

    @Test func readsAPolarH10WithARandomStaticAddress() throws {
        let address: [UInt8] = [0xDA, 0xB4, 0xC6, 0xA1, 0x97, 0xF9]  // F9:97:A1:C6:B4:DA, least significant first
        let advertisement = Self.event(
            [0x3E, 0x18, 0x02, 0x01],  // LE meta event, 24 parameter bytes: Advertising Report, one report
            [0x00, 0x01], address,  // ADV_IND, random
            [0x0C], Self.h10Advertisement,
            [0xB4])  // -76 dBm
        let scanResponse = Self.event(
            [0x3E, 0x28, 0x02, 0x01],  // 40 parameter bytes
            [0x04, 0x01], address,  // SCAN_RSP, random
            [0x1C],
            [0x07, 0xFF, 0x6B, 0x00, 0x3F, 0x00, 0x00, 0x53],  // Polar Electro (0x006B) manufacturer data
            [0x13, 0x09], Array("Polar H10 6BE1772A".utf8),
            [0xB4])

        let advertised = try #require(try Self.onlyReport(of: advertisement))
        #expect(advertised.eventType == EventType.connectableUndirected)
        #expect(advertised.addressType == .random)
        #expect(advertised.address.description == "F9:97:A1:C6:B4:DA")
        #expect(advertised.data.offersHeartRate)
        #expect(advertised.data.serviceUUIDs == [.heartRateService, BluetoothUUID(0xFEEE)])
        #expect(advertised.data.localName == nil)
        #expect(advertised.data.appearance == nil)
        #expect(advertised.rssi == -76)

        let response = try #require(try Self.onlyReport(of: scanResponse))
        #expect(response.eventType == EventType.scanResponse)
        #expect(response.addressType == .random)
        #expect(response.address == advertised.address)
        #expect(!response.data.offersHeartRate)
        #expect(response.data.localName == "Polar H10 6BE1772A")
        #expect(response.data.structures.first == .init(type: 0xFF, data: [0x6B, 0x00, 0x3F, 0x00, 0x00, 0x53]))
    }

    @Test func readsAPolarH10WithAPublicAddress() throws {
        let address: [UInt8] = [0x31, 0x24, 0xDF, 0x1A, 0x9E, 0xA0]  // A0:9E:1A:DF:24:31
        let advertisement = Self.event([0x3E, 0x18, 0x02, 0x01], [0x00, 0x00], address, [0x0C], Self.h10Advertisement, [0xC2])
        let scanResponse = Self.event(
            [0x3E, 0x28, 0x02, 0x01], [0x04, 0x00], address, [0x1C],
            [0x07, 0xFF, 0x6B, 0x00, 0x3F, 0x00, 0x00, 0x52],
            [0x13, 0x09], Array("Polar H10 DF243120".utf8),
            [0xC2])  // -62 dBm

        let advertised = try #require(try Self.onlyReport(of: advertisement))
        #expect(advertised.addressType == .public)
        #expect(advertised.addressType.socketAddressType == 1)
        #expect(advertised.address.description == "A0:9E:1A:DF:24:31")
        #expect(advertised.data.offersHeartRate)
        #expect(advertised.rssi == -62)

        let response = try #require(try Self.onlyReport(of: scanResponse))
        #expect(response.addressType == .public)
        #expect(response.address == advertised.address)
        #expect(response.data.localName == "Polar H10 DF243120")
        #expect(!response.data.offersHeartRate)
    }

    /// A Polar H7 as nRF Connect showed its raw data (polarofficial/polar-ble-sdk issue 305):
    /// the advertising data and the scan response one after the other, 37 bytes, more than one
    /// legacy PDU holds, so the dump is read as advertising data only, as captured.
    @Test func readsAPolarH7sAdvertisingAndScanResponseDataAsDumped() throws {
        var dump: [UInt8] = [0x02, 0x01, 0x06, 0x03, 0x02, 0x0D, 0x18, 0x07, 0xFF, 0x6B, 0x00, 0x3B, 0x1B, 0x54, 0x52, 0x02, 0x0A, 0x00]
        dump += [0x12, 0x09] + Array("Polar H7 D7904C14".utf8)
        #expect(dump.count == 37)
        let data = try AdvertisingData(decoding: dump)
        #expect(data.serviceUUIDs == [.heartRateService])
        #expect(data.localName == "Polar H7 D7904C14")
        #expect(data.structures.map(\.type) == [0x01, 0x02, 0xFF, 0x0A, 0x09])
        #expect(data.encoded == dump)
    }
}
