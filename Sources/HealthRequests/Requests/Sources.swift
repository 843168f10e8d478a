import HealthModel

/// A manager reads every source that wrote samples.
public struct Sources: HealthRequest {
    public static let name = "Sources"
    public static let access = RequestAccess.manager

    public init() {}

    public struct Response: Codable, Sendable {
        public var sources: [SourceSummary]
    }

    public func serve(in context: some RequestContext) async throws(RequestFailure) -> Response {
        Response(sources: try await context.onStore { store throws(HealthStoreError) in try store.sourceSummaries() })
    }
}
