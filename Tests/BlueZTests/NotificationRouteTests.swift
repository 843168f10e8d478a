import SDBus
import Synchronization
import Testing

@testable import BlueZBackend

@Suite("Notifications routed past the object cache")
struct NotificationRouteTests {
    private let measurementPath = "/org/bluez/hci0/dev_AA_BB_CC_DD_EE_01/service000a/char000b"

    private func propertiesChanged(_ changed: [(String, DBusValue)], path: String) -> DBusSignal {
        DBusSignal(
            sender: ":1.1", path: path, interface: BlueZ.properties, member: "PropertiesChanged",
            arguments: [.string(BlueZ.characteristicInterface), .properties(changed), .strings([])])
    }

    @Test("a routed characteristic's Value alone is delivered and taken; anything else, or after the route ends, is left")
    func routedValuesAreTaken() {
        let model = BlueZModel()
        let delivered = Mutex<[[UInt8]]>([])
        model.routeNotifications(of: measurementPath) { value in delivered.withLock { $0.append(value) } }
        #expect(model.takeNotification(propertiesChanged([("Value", .variant(.bytes([0x00, 0x48])))], path: measurementPath)))
        #expect(!model.takeNotification(propertiesChanged([("Value", .variant(.bytes([0x00, 0x49])))], path: measurementPath + "x")))
        #expect(!model.takeNotification(propertiesChanged(
            [("Value", .variant(.bytes([0x00, 0x4A]))), ("Notifying", .variant(.bool(true)))], path: measurementPath)))
        model.removeRoute(of: measurementPath)
        #expect(!model.takeNotification(propertiesChanged([("Value", .variant(.bytes([0x00, 0x4B])))], path: measurementPath)))
        #expect(delivered.withLock { $0 } == [[0x00, 0x48]])
    }
}
