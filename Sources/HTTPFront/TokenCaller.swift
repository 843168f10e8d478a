import HealthModel
import HealthRequests
import HealthStore
import Logging
import RequestServing

/// A request's context when it comes with a valid token: the token's source is the caller,
/// as a verified application is over D-Bus (the token, not the request, names it), and a
/// manager token is a manager. Serves requests through the store workers.
struct TokenCaller: HealthRequests.RequestContext, RequestFront {
    let token: AccessTokenRecord
    let store: HealthStore
    let workers: StoreWorkers
    let tokens: AnchorTokens
    let logger: Logger

    /// The login name the token's source starts with.
    var user: String { String(token.source.prefix { $0 != "/" }) }

    /// The application part of the token's source: what requests name as their `app`.
    var app: String { String(token.source.drop { $0 != "/" }.dropFirst()) }

    func log(_ level: RequestLogLevel, _ message: String, _ fields: [String: String]) {
        var metadata = fields.mapValues { Logger.MetadataValue.string($0) }
        metadata["user"] = .string(user)
        metadata["token"] = .string(token.id)
        switch level {
        case .info: logger.info("\(message)", metadata: metadata)
        case .notice: logger.notice("\(message)", metadata: metadata)
        }
    }

    func source(app: String) throws(RequestFailure) -> String { token.source }

    func isManager() async throws(RequestFailure) -> Bool { token.manager }

    func requireManager(for what: String) async throws(RequestFailure) {
        guard token.manager else { throw .accessDenied("\(what) needs a manager's token (hrmctl auth token create --manager)") }
    }

    func onStore<T: Sendable>(_ body: @escaping @Sendable (any RequestStore) throws(HealthStoreError) -> T) async throws(RequestFailure) -> T {
        try await workers.run { [store] () throws(RequestFailure) -> T in
            do throws(HealthStoreError) { return try body(store) } catch { throw .store(error) }
        }
    }

    var front: any RequestFront { self }

    func writeSamples(_ query: SampleQuery, view: CallerView, to output: PassedFile) async throws(RequestFailure) -> Int {
        throw .invalidArguments("files are not passed over HTTP: page through /api/v1/samples")
    }

    func importRecording(_ options: ImportOptions, from file: PassedFile) async throws(RequestFailure) -> ImportResult {
        throw .invalidArguments("imports are not made over HTTP: use hrmctl replay")
    }

    func observe(source: String, type: SampleType, isManager: Bool) throws(RequestFailure) {
        throw .invalidArguments("over HTTP, follow changes with /api/v1/live")
    }

    func unobserve(source: String, type: SampleType) {}
}

