import DeviceDiscovery
import Testing

@Suite struct HotplugDeviceTests {
    let syspath = "/sys/devices/pci0000:00/usb1/1-1/1-1:1.0/ttyUSB0/tty/ttyUSB0"

    @Test func aStickMarkedByTheRulesIsAnANTDeviceWithItsStableName() throws {
        let device = try #require(HotplugDevice(
            syspath: syspath, devnode: "/dev/ttyUSB0",
            properties: ["SUBSYSTEM": "tty", "HRMD_SENSOR": "ant", "ID_VENDOR_ID": "0fcf", "ID_MODEL_ID": "1008", "ID_SERIAL_SHORT": "123456"],
            devlinks: ["/dev/serial/by-id/usb-Dynastream-if00", "/dev/hrmd/ant-ttyUSB0"]))
        #expect(device == HotplugDevice(
            devnode: "/dev/ttyUSB0", syspath: syspath, kind: .ant, vendorID: "0fcf", modelID: "1008",
            serial: "123456", symlink: "/dev/hrmd/ant-ttyUSB0", baud: 115_200))
        #expect(device.description == "ANT stick /dev/ttyUSB0 (0fcf:1008, serial 123456, /dev/hrmd/ant-ttyUSB0)")
    }

    @Test func aDynastreamStickIsFoundWithoutTheRules() throws {
        let device = try #require(HotplugDevice(
            syspath: syspath, devnode: "/dev/ttyUSB0", properties: ["SUBSYSTEM": "tty", "ID_VENDOR_ID": "0FCF", "ID_MODEL_ID": "1004"]))
        #expect(device.kind == .ant)
        #expect(device.vendorID == "0fcf")
        #expect(device.modelID == "1004")
        #expect(device.baud == 115_200)
        #expect(device.symlink == nil)
    }

    @Test func aSerialSensorTakesItsBaudFromTheProperty() throws {
        let device = try #require(HotplugDevice(
            syspath: "/sys/devices/x/ttyACM0", devnode: "/dev/ttyACM0",
            properties: ["HRMD_SENSOR": "serial", "HRMD_BAUD": "9600", "DEVLINKS": "/dev/serial/by-id/arduino /dev/hrmd/serial-ttyACM0"]))
        #expect(device.kind == .serial)
        #expect(device.baud == 9600)
        #expect(device.symlink == "/dev/hrmd/serial-ttyACM0")
    }

    @Test func aSerialSensorWithoutBaudLeavesItToTheBackend() throws {
        let device = try #require(HotplugDevice(syspath: "/sys/x", devnode: "/dev/ttyACM0", properties: ["HRMD_SENSOR": "serial", "HRMD_BAUD": "fast"]))
        #expect(device.baud == nil)
    }

    @Test func theBaudPropertyOverridesTheStickTable() throws {
        let device = try #require(HotplugDevice(
            syspath: syspath, devnode: "/dev/ttyUSB0",
            properties: ["HRMD_SENSOR": "ant", "ID_VENDOR_ID": "0fcf", "ID_MODEL_ID": "1004", "HRMD_BAUD": "57600"]))
        #expect(device.baud == 57_600)
    }

    @Test(arguments: [
        ["SUBSYSTEM": "tty"],  // an ordinary serial port
        ["SUBSYSTEM": "tty", "ID_VENDOR_ID": "0fcf", "ID_MODEL_ID": "1234"],  // another Dynastream product
        ["SUBSYSTEM": "tty", "ID_VENDOR_ID": "2341", "ID_MODEL_ID": "0043"],  // an Arduino nobody marked
        ["SUBSYSTEM": "tty", "HRMD_SENSOR": "ble"],  // a kind hrmd does not serve over udev
        ["SUBSYSTEM": "usb", "HRMD_SENSOR": "ant"],  // not a tty
    ])
    func devicesHrmdDoesNotServeAreLeftAlone(properties: [String: String]) {
        #expect(HotplugDevice(syspath: syspath, devnode: "/dev/ttyUSB0", properties: properties) == nil)
    }

    @Test func aDeviceWithoutANodeIsLeftAlone() {
        #expect(HotplugDevice(syspath: syspath, devnode: nil, properties: ["HRMD_SENSOR": "ant"]) == nil)
        #expect(HotplugDevice(syspath: syspath, devnode: "", properties: ["HRMD_SENSOR": "ant"]) == nil)
    }

    @Test func theStickTableKnowsEveryDynastreamStickAndItsSpeed() {
        #expect(ANTStickModel.all.map(\.modelID) == ["1008", "1009", "1004"])
        #expect(ANTStickModel.all.allSatisfy { $0.vendorID == "0fcf" && $0.baud == 115_200 })
        #expect(ANTStickModel.known(vendorID: "0fcf", modelID: "1009")?.name == "ANTUSB-m Stick")
        #expect(ANTStickModel.known(vendorID: "0FCF", modelID: "1008") != nil)
        #expect(ANTStickModel.known(vendorID: "0fcf", modelID: nil) == nil)
        #expect(ANTStickModel.known(vendorID: "1234", modelID: "1008") == nil)
    }
}

@Suite struct HotplugEventTests {
    let device = HotplugDevice(devnode: "/dev/ttyUSB0", syspath: "/sys/a", kind: .ant)

    @Test func addAndChangeOfAServedDeviceAreAdditions() {
        #expect(HotplugEvent(action: "add", syspath: "/sys/a", device: device) == .added(device))
        #expect(HotplugEvent(action: "change", syspath: "/sys/a", device: device) == .added(device))
    }

    @Test func removeIsARemovalWhateverTheDevice() {
        #expect(HotplugEvent(action: "remove", syspath: "/sys/a", device: nil) == .removed(syspath: "/sys/a"))
        #expect(HotplugEvent(action: "remove", syspath: "/sys/a", device: device) == .removed(syspath: "/sys/a"))
    }

    @Test func aChangeThatUnmarksADeviceRemovesIt() {
        #expect(HotplugEvent(action: "change", syspath: "/sys/a", device: nil) == .removed(syspath: "/sys/a"))
    }

    @Test func otherActionsAndForeignAdditionsChangeNothing() {
        #expect(HotplugEvent(action: "add", syspath: "/sys/a", device: nil) == nil)
        #expect(HotplugEvent(action: "bind", syspath: "/sys/a", device: device) == nil)
        #expect(HotplugEvent(action: "move", syspath: "/sys/a", device: device) == nil)
    }
}

@Suite struct UdevErrorTests {
    @Test func namesTheCallAndTheErrno() {
        #expect(UdevError("udev_enumerate_scan_devices", errno: 13).description == "udev_enumerate_scan_devices failed: Permission denied (errno 13)")
    }
}
