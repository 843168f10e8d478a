import HealthModel
import HealthStore
import HealthWire
import SDBus

extension HealthRequests {
    func observe(_ caller: Caller, _ arguments: inout CallArguments) async throws(ServiceFailure) -> [DBusValue] {
        let source = try caller.source(app: try arguments.string("app"))
        let type = try arguments.sampleType()
        let isManager = try await authority.isManager(caller, interactive: false)
        try observers.add(.init(busName: caller.busName, uid: caller.uid, source: source, type: type, isManager: isManager))
        logger.debug("\(source) (\(caller.busName)) observes \(type.identifier)")
        return []
    }

    func unobserve(_ caller: Caller, _ arguments: inout CallArguments) throws(ServiceFailure) -> [DBusValue] {
        let source = try caller.source(app: try arguments.string("app"))
        let type = try arguments.sampleType()
        observers.remove(busName: caller.busName, source: source, type: type)
        return []
    }
}
