import HealthModel

/// A manager reads every request and answer, one entry per (source, type, access).
public struct Authorizations: HealthRequest {
    public static let name = "Authorizations"
    public static let access = RequestAccess.manager
    public static let memory: RequestMemory = .answer(RequestBudgets.sources, of: "source with authorization records")

    public init() {}

    public struct Response: Codable, Sendable {
        public var entries: [AuthorizationAccessEntry]
    }

    public func serve(in context: some RequestContext) async throws(RequestFailure) -> Response {
        Response(entries: try await context.onStore { store throws(HealthStoreError) in try store.authorizationAccessEntries() })
    }
}
