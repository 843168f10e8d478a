import ANTBackend
import BlueZBackend
import BluetoothWire
import CommandSupport
import DeviceDiscovery
import Foundation
import HCIBackend
import HRMConfiguration
import Logging
import Recordings
import SensorBackend
import SensorFrames
import SensorSimulator
import SerialBackend

/// Turns sensor specifications into backends.
enum SensorFactory {
    /// The plans for `specs`, keyed by the backend's name (mock-1, replay:FILE, …).
    static func plans(for specs: [SensorSpec], anyStrap: Bool = false, logger: Logger) throws(CommandFailure) -> [SensorPlan] {
        try backends(for: specs, anyStrap: anyStrap, logger: logger).map { backend in
            // A BLE backend's key names what it admits, so a reload that changes it restarts it.
            let key: String? = switch backend {
            case let ble as BlueZSensors: admissionKey(ble.name, ble.settings.addresses, anyStrap: ble.settings.anyStrap)
            case let hci as HCISensors: admissionKey(hci.name, hci.settings.addresses.map(\.description), anyStrap: hci.settings.anyStrap)
            default: nil
            }
            return SensorPlan(key: key ?? backend.name, backend: backend)
        }
    }

    private static func admissionKey(_ name: String, _ addresses: [String], anyStrap: Bool) -> String {
        name + (addresses.isEmpty ? "" : ":" + addresses.sorted().joined(separator: ",")) + (anyStrap ? " (any strap)" : "")
    }

    /// The backends for `specs`. Every `ble` spec goes to one BlueZ backend: `ble:ADDRESS`
    /// specs list the straps it takes; a bare `ble` (or `anyStrap`) lets it take trusted,
    /// paired (or any) straps. With an `hci` spec the straps go through the kernel instead:
    /// the `ble:ADDRESS` specs list the straps the hci backend takes, and there is no BlueZ
    /// backend (one radio, one stack).
    static func backends(for specs: [SensorSpec], anyStrap: Bool = false, logger: Logger) throws(CommandFailure) -> [any SensorBackend] {
        var backends: [any SensorBackend] = []
        var bleAddresses: [String] = []
        var bleWanted = false
        var bareBLE = false
        var hciAdapters: [UInt16?] = []
        var mockCount = 0
        var seen = Set<String>()
        for spec in specs {
            switch spec {
            case .mock(let options):
                mockCount += 1
                let id = options.id ?? "mock-\(mockCount)"
                guard seen.insert(id).inserted else {
                    throw CommandFailure("two mock sensors are both named \(id); give one another id=", status: .usage)
                }
                backends.append(MockSensor(settings: .init(
                    id: SensorID(id), restingBPM: options.bpm, hz: options.hz, emitsRRIntervals: options.rr,
                    location: options.location, seed: options.seed ?? UInt64(mockCount),
                    contactLossProbability: options.contactLoss, ecg: options.ecg, acceleration: options.acc)))
            case .replay(let path, let measurementHandle):
                guard FileManager.default.fileExists(atPath: path) else {
                    throw CommandFailure("recording \(path) does not exist", status: .noInput)
                }
                let captureOptions = BTSnoopOptions(measurementHandle: measurementHandle)
                do {
                    _ = try RecordingSource.entries(of: path, captureOptions: captureOptions)
                } catch {
                    throw CommandFailure("\(error)", status: .dataError)
                }
                backends.append(ReplaySensor(path: path, speed: 1, captureOptions: captureOptions, logger: logger))
            case .ant(let tty?):
                guard seen.insert("ant:\(tty)").inserted else { continue }
                backends.append(ANTStickSensor(settings: .init(path: tty), logger: logger))
            case .serial(let path?, let baud):
                guard seen.insert("serial:\(path)").inserted else { continue }
                backends.append(SerialLineSensor(settings: .init(path: path, baud: baud ?? 115_200), logger: logger))
            case .ant(nil):
                guard seen.insert("ant").inserted else { continue }
                backends.append(HotplugSensors(kind: .ant, excluding: configuredPaths(specs), logger: logger) { device in
                    ANTStickSensor(settings: .init(path: device.devnode, baud: device.baud ?? 115_200), logger: logger)
                })
            case .serial(nil, _):
                guard seen.insert("serial").inserted else { continue }
                backends.append(HotplugSensors(kind: .serial, excluding: configuredPaths(specs), logger: logger) { device in
                    SerialLineSensor(settings: .init(path: device.devnode, baud: device.baud ?? 115_200), logger: logger)
                })
            case .ble(let address):
                bleWanted = true
                if let address, !bleAddresses.contains(address) { bleAddresses.append(address) }
                if address == nil { bareBLE = true }
            case .hci(let adapter):
                if !hciAdapters.contains(adapter) { hciAdapters.append(adapter) }
            }
        }
        if !hciAdapters.isEmpty {
            backends.append(try hciBackend(adapters: hciAdapters, bareBLE: bareBLE, addresses: bleAddresses, anyStrap: anyStrap))
        } else if bleWanted {
            backends.append(BlueZSensors(
                settings: .init(addresses: bleAddresses, anyStrap: anyStrap), logger: Logger(label: "hrmd.ble")))
        }
        return backends
    }

    /// The one hci backend, taking the straps the `ble:ADDRESS` specs list.
    private static func hciBackend(
        adapters: [UInt16?], bareBLE: Bool, addresses: [String], anyStrap: Bool
    ) throws(CommandFailure) -> HCISensors {
        guard adapters.count == 1, let adapter = adapters.first else {
            let names = adapters.map { SensorSpec.hci(adapter: $0).description }.joined(separator: " and ")
            throw CommandFailure("hci drives one adapter: choose one of \(names)", status: .usage)
        }
        guard !bareBLE else {
            throw CommandFailure(
                "ble and hci both drive BLE straps: choose one (with hci, ble:ADDRESS specs list the straps to record)", status: .usage)
        }
        let straps = addresses.compactMap { BluetoothAddress($0) }
        return HCISensors(
            settings: .init(adapter: adapter.map { .index($0) } ?? .first, addresses: straps, anyStrap: anyStrap),
            logger: Logger(label: "hrmd.hci"))
    }

    /// The ttys named by path (`ant:/dev/…`, `serial:/dev/…`), symlinks resolved: udev-found
    /// devices leave these to their own backend.
    private static func configuredPaths(_ specs: [SensorSpec]) -> Set<String> {
        var paths = Set<String>()
        for spec in specs {
            switch spec {
            case .ant(let tty?): paths.insert(tty)
            case .serial(let path?, _): paths.insert(path)
            default: continue
            }
        }
        return paths.union(paths.map { URL(fileURLWithPath: $0).resolvingSymlinksInPath().path })
    }
}
