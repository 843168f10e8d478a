import SDBus
import Testing

@testable import BlueZBackend

/// The model takes bluetoothd's signals on the bus's loop thread: what it took is in the cache
/// when `take` returns, so a reply read after a signal finds that signal applied.
@Suite("The model of bluetoothd's objects")
struct BlueZModelTests {
    private let devicePath = "/org/bluez/hci0/dev_AA_BB_CC_DD_EE_01"
    private var measurementPath: String { devicePath + "/service000a/char000b" }

    private var objects: DBusValue {
        .dictionary(key: "o", value: "a{sa{sv}}", [
            DBusDictionaryEntry(.objectPath(devicePath), .dictionary(key: "s", value: "a{sv}", [
                DBusDictionaryEntry(.string(BlueZ.deviceInterface), .properties([("Address", .string("AA:BB:CC:DD:EE:01"))])),
            ])),
        ])
    }

    private var measurementAdded: DBusSignal {
        DBusSignal(
            sender: ":1.1", path: "/", interface: BlueZ.objectManager, member: "InterfacesAdded",
            arguments: [
                .objectPath(measurementPath),
                .dictionary(key: "s", value: "a{sv}", [
                    DBusDictionaryEntry(.string(BlueZ.characteristicInterface), .properties([("UUID", .string(BlueZ.uuid(0x2A37)))])),
                ]),
            ])
    }

    private var servicesResolved: DBusSignal {
        DBusSignal(
            sender: ":1.1", path: devicePath, interface: BlueZ.properties, member: "PropertiesChanged",
            arguments: [.string(BlueZ.deviceInterface), .properties([("ServicesResolved", .bool(true))]), .strings([])])
    }

    @Test("a signal taken is in the cache, and told to the watchers, when take returns")
    func takenSignalsAreAppliedAtOnce() async {
        let model = BlueZModel()
        model.load(managedObjects: objects)
        let (_, changes) = model.watch { $0.path.hasPrefix(devicePath) }
        #expect(model.take(measurementAdded))
        #expect(model.cache.characteristic(BlueZ.uuid(0x2A37), of: devicePath) != nil)
        model.end()
        var heard: [BlueZChange] = []
        for await change in changes { heard.append(change) }
        #expect(heard == [.interfacesAdded(path: measurementPath, interfaces: [BlueZ.characteristicInterface])])
    }

    @Test("signals taken before GetManagedObjects was loaded are applied on top of it, in order")
    func earlySignalsFollowTheLoad() {
        let model = BlueZModel()
        #expect(model.take(measurementAdded))
        #expect(model.take(servicesResolved))
        #expect(model.cache.objects.isEmpty, "nothing is applied before the load")
        model.load(managedObjects: objects)
        #expect(model.cache.device(path: devicePath)?.servicesResolved == true)
        #expect(model.cache.characteristic(BlueZ.uuid(0x2A37), of: devicePath) != nil)
    }
}
