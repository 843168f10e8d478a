import BluetoothWire
import SensorFrames

/// A primary service and the characteristics declared in it, in handle order.
struct DiscoveredService: Sendable {
    let service: GATTService
    let characteristics: [GATTCharacteristic]

    /// The first characteristic of type `uuid`.
    func characteristic(_ uuid: BluetoothUUID) -> GATTCharacteristic? {
        characteristics.first { $0.uuid == uuid }
    }

    /// Where `characteristic`'s descriptors are: after its value, up to the next declaration or
    /// the end of the service; nil when there is no room for any.
    func descriptorRange(of characteristic: GATTCharacteristic) -> ClosedRange<UInt16>? {
        let next = characteristics.lazy.map(\.declarationHandle).filter { $0 > characteristic.declarationHandle }.min()
        let last = next.map { $0 - 1 } ?? service.end
        guard characteristic.valueHandle < last else { return nil }
        return (characteristic.valueHandle + 1)...last
    }
}

/// What hrmd uses of a strap's GATT table: the Heart Rate, Device Information and Battery
/// services with their characteristics (the first of each service; others are not looked into).
struct StrapProfile: Sendable {
    var heartRate: DiscoveredService?
    var deviceInformation: DiscoveredService?
    var battery: DiscoveredService?

    /// Discovers the primary services, then the characteristics of the three hrmd reads.
    static func discover(with gatt: GATTClient) async throws(ATTClientError) -> StrapProfile {
        let services = try await gatt.primaryServices()
        func discovered(_ uuid: BluetoothUUID) async throws(ATTClientError) -> DiscoveredService? {
            guard let service = services.first(where: { $0.uuid == uuid }) else { return nil }
            return DiscoveredService(service: service, characteristics: try await gatt.characteristics(of: service))
        }
        return StrapProfile(
            heartRate: try await discovered(.heartRateService),
            deviceInformation: try await discovered(.deviceInformationService),
            battery: try await discovered(.batteryService))
    }

    /// Heart Rate Measurement (0x2A37), with its service.
    var measurement: (GATTCharacteristic, in: DiscoveredService)? {
        guard let heartRate, let measurement = heartRate.characteristic(.heartRateMeasurement) else { return nil }
        return (measurement, heartRate)
    }

    /// Battery Level (0x2A19), with its service.
    var batteryLevel: (GATTCharacteristic, in: DiscoveredService)? {
        guard let battery, let level = battery.characteristic(.batteryLevel) else { return nil }
        return (level, battery)
    }

    /// What is read after connecting, in the BlueZ backend's order: Body Sensor Location, then
    /// the Device Information strings (Battery Level comes last, on its own).
    var informationReads: [GATTCharacteristic] {
        let location = heartRate?.characteristic(.bodySensorLocation)
        let strings = DeviceInformationField.deviceInformationService.compactMap { field in
            deviceInformation?.characteristic(BluetoothUUID(field.characteristic.rawValue))
        }
        return [location].compactMap { $0 } + strings
    }
}
