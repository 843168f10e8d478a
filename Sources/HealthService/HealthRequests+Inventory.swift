import HealthModel
import HealthStore
import HealthWire
import SDBus

extension HealthRequests {
    func devices(_ caller: Caller) async throws(ServiceFailure) -> [DBusValue] {
        try await authority.requireManager(caller, for: "Devices")
        let (devices, activity) = try await onStore { store throws(HealthStoreError) in
            (try store.deviceSummaries(), try store.sensorActivity())
        }
        return [.array(element: "a{sv}", devices.map(\.wireValue)), .array(element: "a{sv}", activity.map(\.wireValue))]
    }

    func sources(_ caller: Caller) async throws(ServiceFailure) -> [DBusValue] {
        try await authority.requireManager(caller, for: "Sources")
        let sources = try await onStore { store throws(HealthStoreError) in try store.sourceSummaries() }
        return [.array(element: "a{sv}", sources.map(\.wireValue))]
    }

    func importRecording(_ caller: Caller, _ arguments: inout CallArguments) async throws(ServiceFailure) -> [DBusValue] {
        let file = try arguments.fileDescriptor("file")
        let options = try arguments.dictionary("options")
        let request: RecordingImporter.Request
        let handle: Int64?
        do {
            handle = try options.integer("measurementHandle")
            request = RecordingImporter.Request(
                name: try options.string("name") ?? "recording", acceptDamaged: try options.bool("acceptDamaged") ?? false,
                speed: try options.number("speed"), measurementHandle: handle.flatMap { UInt16(exactly: $0) })
        } catch {
            throw error.failure
        }
        if let handle, !(1...0xFFFF).contains(handle) { throw .invalidArguments("measurementHandle must be 0x0001…0xffff") }
        if let speed = request.speed, !(speed > 0 && speed.isFinite) { throw .invalidArguments("speed must be a positive number") }
        try await authority.requireManager(caller, for: "Import")
        logger.notice("\(caller.user) imports \(request.name)")
        let result = try await importer.run(request, from: file, uid: caller.uid)
        return [result.summary.wireValue, .strings(result.messages)]
    }
}
