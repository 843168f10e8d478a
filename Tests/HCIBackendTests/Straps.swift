import BluetoothWire
import Testing

/// Advertisements and event packets as straps and controllers send them.
enum Straps {
    static let polar = BluetoothAddress("A0:9E:1A:00:00:01")!
    static let garmin = BluetoothAddress("C4:00:00:00:00:02")!
    static let neighbour = BluetoothAddress("D0:00:00:00:00:03")!
    static let kettle = BluetoothAddress("E0:00:00:00:00:04")!

    /// Flags, the Heart Rate service, and a name.
    static func heartRateData(name: String? = "Polar H10 0001") -> AdvertisingData {
        var structures = [AdvertisingData.Structure(type: 0x01, data: [0x06]), .init(type: 0x03, data: [0x0D, 0x18])]
        if let name { structures.append(.init(type: 0x09, data: Array(name.utf8))) }
        return AdvertisingData(structures: structures)
    }

    /// A device advertising the Battery service only.
    static let otherData = AdvertisingData(structures: [.init(type: 0x03, data: [0x0F, 0x18])])

    static func report(_ address: BluetoothAddress, _ data: AdvertisingData = heartRateData(), type: LEAddressType = .random) -> AdvertisingReport {
        AdvertisingReport(eventType: 0, addressType: type, address: address, data: data, rssi: -60)
    }

    /// An LE Advertising Report event packet (without the H4 type byte) holding `reports`.
    static func advertisingEvent(_ reports: [AdvertisingReport]) -> [UInt8] {
        var parameters: [UInt8] = [0x02, UInt8(reports.count)]
        for report in reports {
            let data = report.data.encoded
            parameters += [UInt8(report.eventType), report.addressType.rawValue] + report.address.littleEndian
            parameters += [UInt8(data.count)] + data + [UInt8(bitPattern: report.rssi ?? 127)]
        }
        return [0x3E, UInt8(parameters.count)] + parameters
    }

    /// A Command Complete event packet for `opcode` with `status` and return parameters.
    static func commandComplete(_ opcode: UInt16, status: UInt8 = 0, _ rest: [UInt8] = []) -> [UInt8] {
        let parameters = [1, UInt8(opcode & 0xFF), UInt8(opcode >> 8), status] + rest
        return [0x0E, UInt8(parameters.count)] + parameters
    }

    /// A Command Status event packet.
    static func commandStatus(_ opcode: UInt16, status: UInt8) -> [UInt8] {
        [0x0F, 4, status, 1, UInt8(opcode & 0xFF), UInt8(opcode >> 8)]
    }

    static let validRequest = ConnectionParameters(minimumInterval: 6, maximumInterval: 12, latency: 0, supervisionTimeout: 400)
}
