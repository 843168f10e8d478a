import BlueZBackend
import SDBus
import Testing

private let devicePath = "/org/bluez/hci0/dev_AA_BB_CC_DD_EE_01"

private func managedObjects(_ objects: [(String, [(String, [(String, DBusValue)])])]) -> DBusValue {
    .dictionary(key: "o", value: "a{sa{sv}}", objects.map { path, interfaces in
        DBusDictionaryEntry(.objectPath(path), .dictionary(key: "s", value: "a{sv}", interfaces.map { name, properties in
            DBusDictionaryEntry(.string(name), .properties(properties))
        }))
    })
}

private func signal(_ member: String, path: String = "/", _ arguments: [DBusValue]) -> DBusSignal {
    DBusSignal(sender: ":1.1", path: path, interface: "", member: member, arguments: arguments)
}

private let initial = managedObjects([
    ("/org/bluez/hci0", [(BlueZ.adapterInterface, [("Address", .string("00:11:22:33:44:55")), ("Powered", .bool(true))])]),
    (devicePath, [(BlueZ.deviceInterface, [
        ("Address", .string("aa:bb:cc:dd:ee:01")), ("Adapter", .objectPath("/org/bluez/hci0")), ("Trusted", .bool(true)),
        ("UUIDs", .strings([BlueZ.heartRateService])), ("Connected", .bool(false)),
    ])]),
])

@Suite struct ObjectCacheTests {
    @Test func loadsManagedObjects() {
        var cache = BlueZObjectCache()
        cache.load(managedObjects: initial)
        #expect(cache.adapters.map(\.powered) == [true])
        let device = cache.device(address: "AA:BB:CC:DD:EE:01")
        #expect(device?.trusted == true)
        #expect(device?.isHeartRateStrap == true)
        #expect(device?.adapterPath == "/org/bluez/hci0")
    }

    @Test func appliesPropertiesAddedAndRemoved() {
        var cache = BlueZObjectCache()
        cache.load(managedObjects: initial)
        cache.apply(signal("PropertiesChanged", path: devicePath, [
            .string(BlueZ.deviceInterface), .properties([("Connected", .bool(true)), ("ServicesResolved", .bool(true))]), .strings([]),
        ]))
        #expect(cache.device(path: devicePath)?.connected == true)
        #expect(cache.device(path: devicePath)?.servicesResolved == true)

        let characteristicPath = devicePath + "/service000c/char000d"
        let change = cache.apply(signal("InterfacesAdded", [
            .objectPath(characteristicPath),
            .dictionary(key: "s", value: "a{sv}", [DBusDictionaryEntry(.string(BlueZ.characteristicInterface), .properties([
                ("UUID", .string(BlueZ.uuid(0x2A37))), ("Flags", .strings(["notify"])), ("NotifyAcquired", .bool(false)),
            ]))]),
        ]))
        #expect(change == .interfacesAdded(path: characteristicPath, interfaces: [BlueZ.characteristicInterface]))
        let characteristic = cache.characteristic(BlueZ.uuid(0x2A37), of: devicePath)
        #expect(characteristic?.supportsAcquireNotify == true)
        #expect(cache.characteristic(BlueZ.uuid(0x2A38), of: devicePath) == nil)

        cache.apply(signal("InterfacesRemoved", [.objectPath(characteristicPath), .strings([BlueZ.characteristicInterface])]))
        #expect(!cache.contains(path: characteristicPath))
        cache.apply(signal("PropertiesChanged", path: "/org/bluez/hci0", [
            .string(BlueZ.adapterInterface), .properties([]), .strings(["Powered"]),
        ]))
        #expect(cache.adapters.first?.powered == false)
    }

    /// bluetoothd 5.66 can leave `Connected: true` unannounced on a link whose services it
    /// then resolves: `ServicesResolved` (set only on a connected device) says it is connected.
    @Test func resolvedServicesMeanConnectedEvenWhenConnectedWasNotAnnounced() {
        var cache = BlueZObjectCache()
        cache.load(managedObjects: initial)
        #expect(cache.device(path: devicePath)?.connected == false)
        cache.apply(signal("PropertiesChanged", path: devicePath, [
            .string(BlueZ.deviceInterface), .properties([("ServicesResolved", .bool(true))]), .strings([]),
        ]))
        #expect(cache.device(path: devicePath)?.connected == true)
        cache.apply(signal("PropertiesChanged", path: devicePath, [
            .string(BlueZ.deviceInterface), .properties([("ServicesResolved", .bool(false))]), .strings([]),
        ]))
        cache.apply(signal("PropertiesChanged", path: devicePath, [
            .string(BlueZ.deviceInterface), .properties([("Connected", .bool(false))]), .strings([]),
        ]))
        #expect(cache.device(path: devicePath)?.connected == false)
    }

    @Test func ignoresPropertiesOfUnknownObjects() {
        var cache = BlueZObjectCache()
        let change = cache.apply(signal("PropertiesChanged", path: devicePath, [
            .string(BlueZ.deviceInterface), .properties([("Connected", .bool(true))]), .strings([]),
        ]))
        #expect(change == nil)
        #expect(cache.devices.isEmpty)
    }
}

@Suite struct StrapAdmissionTests {
    private func cache(trusted: Bool, uuids: [String] = [BlueZ.heartRateService], connected: Bool = false) -> BlueZObjectCache {
        var cache = BlueZObjectCache()
        cache.load(managedObjects: managedObjects([
            (devicePath, [(BlueZ.deviceInterface, [
                ("Address", .string("AA:BB:CC:DD:EE:01")), ("Trusted", .bool(trusted)), ("UUIDs", .strings(uuids)),
                ("Connected", .bool(connected)),
            ])]),
        ]))
        return cache
    }

    @Test func trustedOrListedOnlyByDefault() throws {
        let stranger = try #require(cache(trusted: false).devices.first)
        let trusted = try #require(cache(trusted: true).devices.first)
        #expect(!StrapAdmission(listed: [], anyStrap: false).admits(stranger))
        #expect(StrapAdmission(listed: [], anyStrap: false).admits(trusted))
        #expect(StrapAdmission(listed: ["aa:bb:cc:dd:ee:01"], anyStrap: false).admits(stranger))
        #expect(!StrapAdmission(listed: ["AA:BB:CC:DD:EE:02"], anyStrap: false).admits(trusted), "a list excludes trusted others")
        #expect(StrapAdmission(listed: [], anyStrap: true).admits(stranger))
        let notAStrap = try #require(cache(trusted: false, uuids: ["0000180f-0000-1000-8000-00805f9b34fb"]).devices.first)
        #expect(!StrapAdmission(listed: [], anyStrap: true).admits(notAStrap))
        let trustedHeadset = try #require(cache(trusted: true, uuids: ["0000110b-0000-1000-8000-00805f9b34fb"]).devices.first)
        #expect(!StrapAdmission(listed: [], anyStrap: false).admits(trustedHeadset), "trusted, but not a heart-rate strap")
    }

    @Test func discoveryOnlyWhileAWantedStrapIsMissing() {
        #expect(StrapAdmission(listed: ["AA:BB:CC:DD:EE:02"], anyStrap: false).isStrapMissing(in: cache(trusted: true)))
        #expect(!StrapAdmission(listed: ["AA:BB:CC:DD:EE:01"], anyStrap: false).isStrapMissing(in: cache(trusted: false)))
        #expect(StrapAdmission(listed: [], anyStrap: false).isStrapMissing(in: cache(trusted: false)))
        #expect(!StrapAdmission(listed: [], anyStrap: false).isStrapMissing(in: cache(trusted: true)))
        #expect(StrapAdmission(listed: [], anyStrap: true).isStrapMissing(in: cache(trusted: false)))
        #expect(!StrapAdmission(listed: [], anyStrap: true).isStrapMissing(in: cache(trusted: false, connected: true)))
    }
}

@Suite struct BlueZFailureTests {
    @Test func namesAreClassified() {
        #expect(BlueZFailure(.remote(name: "org.bluez.Error.Failed", message: "le-connection-abort-by-local"))
            == .connectionFailed(BlueZFailure.explain("le-connection-abort-by-local")))
        #expect(BlueZFailure(.remote(name: "org.bluez.Error.InProgress", message: "")) == .inProgress)
        #expect(
            BlueZFailure(.remote(name: "org.bluez.Error.Failed", message: "Operation already in progress")) == .inProgress,
            "bluetoothd's own connection attempt (of an earlier Connect) is still under way")
        #expect(BlueZFailure(.remote(name: "org.freedesktop.DBus.Error.UnknownObject", message: "")) == .gone)
        #expect(BlueZFailure(.remote(name: "org.freedesktop.DBus.Error.AccessDenied", message: "x")) == .notPermitted("x"))
        #expect(BlueZFailure(.remote(name: "org.freedesktop.DBus.Error.NoReply", message: "")) == .noReply)
        #expect(BlueZFailure(.remote(name: "org.bluez.Error.NotReady", message: "")) == .adapterNotReady)
        #expect(BlueZFailure(.disconnected) == .busClosed)
    }
}
