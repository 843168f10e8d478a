import HealthModel

/// A manager reads every source that wrote samples.
public struct Sources: HealthRequest {
    public static let name = "Sources"
    public static let access = RequestAccess.manager
    public static let memory: RequestMemory = .answer(RequestBudgets.sources, of: "source")

    public init() {}

    public struct Response: Codable, Sendable {
        public var sources: [SourceSummary]
    }

    public func serve(in context: some RequestContext) async throws(RequestFailure) -> Response {
        Response(sources: try await context.onStore { store throws(HealthStoreError) in try store.sourceSummaries() })
    }
}
