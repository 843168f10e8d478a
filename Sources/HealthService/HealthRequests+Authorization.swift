import HealthModel
import HealthStore
import HealthWire
import SDBus

extension HealthRequests {
    func requestAuthorization(_ caller: Caller, _ arguments: inout CallArguments) async throws(ServiceFailure) -> [DBusValue] {
        let source = try caller.source(app: try arguments.string("app"))
        let share = try arguments.strings("share")
        let read = try arguments.strings("read")
        guard share.count + read.count <= HealthBusLimits.typesPerRequest else {
            throw .invalidArguments("a request names at most \(HealthBusLimits.typesPerRequest) types")
        }
        let shareTypes = try share.map { name throws(ServiceFailure) in try CallArguments.sampleType(named: name) }
        let readTypes = try read.map { name throws(ServiceFailure) in try CallArguments.sampleType(named: name) }
        let quota = RequestQuota(
            owner: AppName.source(user: caller.user, app: ""), perOwner: HealthBusLimits.applicationsPerUser, inAll: HealthBusLimits.sources)
        try await onStore { store throws(HealthStoreError) in
            try store.requestAuthorization(source: source, toShare: shareTypes, toRead: readTypes, quota: quota)
        }
        logger.info("\(source) asks to share [\(share.joined(separator: ", "))] and read [\(read.joined(separator: ", "))]")
        return []
    }

    func authorizationStatus(_ caller: Caller, _ arguments: inout CallArguments) async throws(ServiceFailure) -> [DBusValue] {
        let source = try caller.source(app: try arguments.string("app"))
        let type = try arguments.sampleType()
        let status = try await onStore { store throws(HealthStoreError) in try store.authorizationStatus(source: source, type: type) }
        return [.string(status.description)]
    }

    func setAuthorization(_ caller: Caller, _ arguments: inout CallArguments) async throws(ServiceFailure) -> [DBusValue] {
        let source = try arguments.string("source")
        let type = try arguments.sampleType()
        let accessName = try arguments.string("access")
        let statusName = try arguments.string("status")
        let access: AuthorizationAccess
        let status: AuthorizationStatus
        do {
            access = try AuthorizationAccess.parse(accessName)
            status = try AuthorizationStatus.parse(statusName)
        } catch {
            throw error.failure
        }
        guard Self.isSourceName(source) else {
            throw .invalidArguments("bad source \(source.quoted): it is 'hrmd', USER/APP with APP matching [a-z0-9][a-z0-9._-]{0,63}, or USER/flatpak:ID, USER/snap:NAME, USER/unit:NAME.service")
        }
        try await authority.requireManager(caller, for: "SetAuthorization")
        try await onStore { store throws(HealthStoreError) in
            switch access {
            case .share: try store.setShareAuthorization(status, source: source, type: type)
            case .read: try store.setReadAuthorization(status, source: source, type: type)
            }
        }
        logger.notice("\(caller.user) set \(access.rawValue) authorization of \(source) for \(type.identifier): \(status)")
        return []
    }

    func authorizations(_ caller: Caller) async throws(ServiceFailure) -> [DBusValue] {
        try await authority.requireManager(caller, for: "Authorizations")
        let entries = try await onStore { store throws(HealthStoreError) in try store.authorizationAccessEntries() }
        return [.array(element: AuthorizationAccessEntry.wireSignature, entries.map(\.wireValue))]
    }

    /// A source a manager may name: the daemon's own, `USER/APP`, or `USER/KIND:NAME` (verified).
    static func isSourceName(_ source: String) -> Bool {
        if source == HealthBus.daemonSource { return true }
        guard let (user, app) = AppName.parts(of: source), !user.isEmpty, user.utf8.count <= 64 else { return false }
        return (try? AppName.validate(String(app))) != nil || VerifiedApp(applicationPart: app) != nil
    }
}
