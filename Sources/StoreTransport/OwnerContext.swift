@preconcurrency import Glibc
import HealthModel
import HealthRequests

/// A request served in hrmctl's own process, as the owner of the store it opened: whoever
/// may open a store file (or connect to the central store) holds all of it, so the owner is
/// a manager, as root is to the store service. Requests are served exactly as a front serves
/// them (``HealthRequest/serve(in:)`` after the access rule), on the calling task, since the
/// process has nothing else to do meanwhile. Files, imports and observers belong to fronts
/// with connections; the owner refuses them with the command that does the same.
struct OwnerContext: RequestContext, RequestFront {
    let store: any RequestStore

    /// Serves `request` as the owner; a store failure keeps the store's own error as its cause.
    func serve<Request: HealthRequest>(_ request: Request) async throws(RequestFailure) -> Request.Response {
        if Request.access == .manager { try await requireManager(for: Request.name) }
        return try await request.serve(in: self)
    }

    /// The login name of this process's user (its uid when it has none).
    var user: String { Self.processUser }

    /// Looked up once, when a request first names the caller's source.
    private static let processUser: String = {
        let uid = geteuid()
        guard let entry = getpwuid(uid), let name = entry.pointee.pw_name else { return String(uid) }
        return String(cString: name)
    }()

    /// hrmctl has no log of its own: what a request did is in what the command prints.
    func log(_ level: RequestLogLevel, _ message: String, _ fields: [String: String]) {}

    func source(app: String) throws(RequestFailure) -> String { "\(user)/\(app)" }

    func isManager() async throws(RequestFailure) -> Bool { true }

    func requireManager(for what: String) async throws(RequestFailure) {}

    /// A manager is shown plain ids and anchors, so these are never shown; their key is this
    /// process's own, random, and tells nothing of the store's.
    var tokens: AnchorTokens { Self.unshownTokens }

    private static let unshownTokens: AnchorTokens = {
        var random = SystemRandomNumberGenerator()
        return AnchorTokens(secret: (0..<16).map { _ in UInt8.random(in: .min ... .max, using: &random) })
    }()

    func onStore<T: Sendable>(_ body: @escaping @Sendable (any RequestStore) throws(HealthStoreError) -> T) async throws(RequestFailure) -> T {
        do throws(HealthStoreError) { return try body(store) } catch { throw .store(error) }
    }

    var front: any RequestFront { self }

    func writeSamples(_ query: SampleQuery, view: CallerView, to output: PassedFile) async throws(RequestFailure) -> Int {
        throw .invalidArguments("a store hrmctl opened itself passes no files: read it with hrmctl samples")
    }

    func importRecording(_ options: ImportOptions, from file: PassedFile) async throws(RequestFailure) -> ImportResult {
        throw .invalidArguments("a store hrmctl opened itself imports nothing through a request: use hrmctl replay --store")
    }

    func observe(source: String, type: SampleType, isManager: Bool) throws(RequestFailure) {
        throw .invalidArguments("a store hrmctl opened itself has no observers: follow it with hrmctl watch")
    }

    func unobserve(source: String, type: SampleType) {}
}
