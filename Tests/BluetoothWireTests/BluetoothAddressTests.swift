import BluetoothWire
import Testing

@Suite struct BluetoothAddressTests {
    @Test func printsMostSignificantByteFirstAndCarriesItLast() throws {
        let address = try #require(BluetoothAddress("a0:9e:1a:12:34:5f"))
        #expect(address.description == "A0:9E:1A:12:34:5F")
        #expect(address.littleEndian == [0x5F, 0x34, 0x12, 0x1A, 0x9E, 0xA0])
        #expect(BluetoothAddress(littleEndian: address.littleEndian) == address)
    }

    @Test func refusesWhatIsNotAnAddress() {
        for text in ["", "A0:9E:1A:12:34", "A0:9E:1A:12:34:5G", "A0:9E:1A:12:34:5F:00", "A09E:1A:12:34:5F", "A0:9E:1A:12:34:5"] {
            #expect(BluetoothAddress(text) == nil, "\(text)")
        }
        #expect(BluetoothAddress(bytes: [1, 2, 3]) == nil)
    }

    @Test func addressTypesMapToTheSocketNumbering() {
        #expect(LEAddressType(hci: 0) == .public)
        #expect(LEAddressType(hci: 1) == .random)
        #expect(LEAddressType(hci: 2) == .public)
        #expect(LEAddressType(hci: 3) == .random)
        #expect(LEAddressType(hci: 4) == nil)
        #expect(LEAddressType.public.socketAddressType == 1)
        #expect(LEAddressType.random.socketAddressType == 2)
    }
}
