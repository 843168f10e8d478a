import HealthModel
import HealthRequests
import HealthStore
import HealthWire
import Logging
import RequestServing
import SDBus

/// The D-Bus front of the store's requests: for each call, who calls (as the bus daemon
/// says), which request (by the method's name), its arguments decoded as the interface
/// table lays them out; then the request's own access rule and `serve`, and its answer
/// encoded back. It adds no rule of its own: every rule is the request's.
struct RequestDispatch: Sendable {
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
            return call.fail(name: error.failure.kind.busErrorName, message: error.failure.message)
        }
        do {
            call.reply(try await answer(call, caller: caller))
        } catch {
            let metadata: Logger.Metadata = ["user": .string(caller.user), "method": .string(call.member)]
            if error.kind == .failed { logger.error("request failed: \(error.message)", metadata: metadata) }
            else { logger.debug("request refused: \(error)", metadata: metadata) }
            call.fail(name: error.kind.busErrorName, message: error.message)
        }
    }

    private func answer(_ call: DBusMethodCall, caller: Caller) async throws(RequestFailure) -> [DBusValue] {
        guard let request = RequestCatalog.request(named: call.member), let layout = HealthInterface.layouts[call.member] else {
            throw RequestFailure(.unknownRequest, "no method \(call.member) in \(HealthBus.interface)")
        }
        return try await answer(request, call.arguments, layout: layout, caller: caller)
    }

    private func answer<Request: HealthRequest>(
        _ type: Request.Type, _ arguments: [DBusValue], layout: (inputs: [DBusArgument], outputs: [DBusArgument]), caller: Caller
    ) async throws(RequestFailure) -> [DBusValue] {
        let request: Request
        do { request = try RequestCoding.decode(Request.self, from: arguments, as: layout.inputs) } catch { throw error.failure }
        let context = CallContext(caller: caller, dispatch: self)
        if Request.access == .manager { try await authority.requireManager(caller, for: Request.name) }
        let response = try await request.serve(in: context)
        do { return try RequestCoding.encode(response, as: layout.outputs) } catch {
            throw RequestFailure(.failed, "\(Request.name): the answer cannot be coded: \(error)")
        }
    }

    /// Runs store work on a worker thread, turning the store's errors into failures.
    func onStore<T: Sendable>(_ body: @escaping @Sendable (HealthStore) throws(HealthStoreError) -> T) async throws(RequestFailure) -> T {
        let store = store
        return try await workers.run { () throws(RequestFailure) -> T in
            do throws(HealthStoreError) { return try body(store) } catch { throw .store(error) }
        }
    }
}

