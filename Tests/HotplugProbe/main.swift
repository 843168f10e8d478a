import DeviceDiscovery
import Foundation

// Prints what udev discovery sees, one line per event, for the umockdev tests:
//   added <kind> <devnode> <vendor>:<model> baud=<n>
//   removed <syspath>
//   scanned
// It stops after the number of seconds given as its argument (default 10).
let seconds = CommandLine.arguments.dropFirst().first.flatMap(Double.init) ?? 10

func line(_ event: HotplugEvent) -> String {
    switch event {
    case .added(let device):
        "added \(device.kind.rawValue) \(device.devnode) \(device.vendorID ?? "-"):\(device.modelID ?? "-") baud=\(device.baud.map(String.init) ?? "-")"
    case .removed(let syspath):
        "removed \(syspath)"
    case .initialScanFinished:
        "scanned"
    }
}

do {
    let events = try UdevHotplugEvents().events()
    await withTaskGroup(of: Void.self) { group in
        group.addTask {
            for await event in events {
                FileHandle.standardOutput.write(Data((line(event) + "\n").utf8))
            }
        }
        group.addTask { try? await Task.sleep(for: .seconds(seconds)) }
        await group.next()
        group.cancelAll()
    }
} catch {
    FileHandle.standardError.write(Data("hotplug-probe: \(error)\n".utf8))
    exit(1)
}
