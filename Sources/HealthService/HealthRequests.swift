import HealthModel
import HealthStore
import HealthWire
import Logging
import SDBus

/// The methods of `org.hrmd.Health1`: each reads its arguments, checks who may do what,
/// does its store work on the store workers and answers. Nothing here knows how calls
/// arrive; `HealthService` hands them in.
struct HealthRequests: Sendable {
    let store: HealthStore
    let authority: ManagerAuthority
    let observers: ObserverRegistry
    let importer: RecordingImporter
    let workers: StoreWorkers
    let userNames: UserNames
    let identities: AppIdentities
    /// How sample ids and anchors are shown to applications.
    let tokens: AnchorTokens
    let logger: Logger

    /// Answers one call: its reply, or an error reply with a one-line message.
    func respond(to call: DBusMethodCall) async {
        var caller = Caller(
            busName: call.sender, uid: call.senderUID, user: userNames.name(of: call.senderUID),
            allowsInteraction: call.allowsInteractiveAuthorization)
        do { caller.verifiedApp = try await identities.application(of: call.sender, uid: call.senderUID) } catch {
            return call.fail(name: error.failure.name, message: error.failure.message)
        }
        var arguments = CallArguments(call.arguments)
        do {
            call.reply(try await answer(call.member, caller: caller, arguments: &arguments))
        } catch {
            if error.name == HealthBusError.failed { logger.error("\(call.member) from \(caller.user) failed: \(error.message)") }
            else { logger.debug("\(call.member) from \(caller.user) refused: \(error)") }
            call.fail(name: error.name, message: error.message)
        }
    }

    private func answer(_ member: String, caller: Caller, arguments: inout CallArguments) async throws(ServiceFailure) -> [DBusValue] {
        switch member {
        case "RequestAuthorization": return try await requestAuthorization(caller, &arguments)
        case "AuthorizationStatus": return try await authorizationStatus(caller, &arguments)
        case "SaveSamples": return try await saveSamples(caller, &arguments)
        case "QuerySamples": return try await querySamples(caller, &arguments)
        case "QuerySamplesToFile": return try await querySamplesToFile(caller, &arguments)
        case "Statistics": return try await statistics(caller, &arguments)
        case "HeartRateVariability": return try await heartRateVariability(caller, &arguments)
        case "HeartRateZones": return try await heartRateZones(caller, &arguments)
        case "Changes": return try await changes(caller, &arguments)
        case "CurrentAnchor": return try await currentAnchor(caller)
        case "Anchor": return try await anchor(caller, &arguments)
        case "Observe": return try await observe(caller, &arguments)
        case "Unobserve": return try unobserve(caller, &arguments)
        case "DeleteSamples": return try await deleteSamples(caller, &arguments)
        case "SetAuthorization": return try await setAuthorization(caller, &arguments)
        case "Authorizations": return try await authorizations(caller)
        case "Devices": return try await devices(caller)
        case "Sources": return try await sources(caller)
        case "Import": return try await importRecording(caller, &arguments)
        default: throw ServiceFailure(name: "org.freedesktop.DBus.Error.UnknownMethod", message: "no method \(member) in \(HealthBus.interface)")
        }
    }

    /// Runs store work on a worker thread, turning the store's errors into failures.
    func onStore<T: Sendable>(_ body: @escaping @Sendable (HealthStore) throws(HealthStoreError) -> T) async throws(ServiceFailure) -> T {
        let store = store
        return try await workers.run { () throws(ServiceFailure) -> T in
            do throws(HealthStoreError) { return try body(store) } catch { throw .store(error) }
        }
    }

    /// The reader a query runs as: nil (every source) for a manager, else the caller's
    /// source, which sees everything only with read authorization and otherwise its own.
    func reader(for caller: Caller, source: String) async throws(ServiceFailure) -> String? {
        try await view(for: caller, source: source).reader
    }

    /// What `caller`, as `source`, sees: the reader its queries run as, and how ids and
    /// anchors are shown to it.
    func view(for caller: Caller, source: String) async throws(ServiceFailure) -> CallerView {
        view(of: source, isManager: try await authority.isManager(caller, interactive: false))
    }

    /// What `source` sees, as a manager or not.
    func view(of source: String, isManager: Bool) -> CallerView {
        isManager ? CallerView(reader: nil, tokens: nil) : CallerView(reader: source, tokens: tokens)
    }
}
