import HealthModel
import Timestamps

/// Heart-rate variability (SDNN, RMSSD, …) of the RR intervals in [since, until) the caller
/// may read; empty without beats.
public struct HeartRateVariabilityRequest: HealthRequest {
    public static let name = "HeartRateVariability"
    public static let access = RequestAccess.application
    public static let memory: RequestMemory = .perSeries

    public var app: String
    public var since: Int64
    public var until: Int64

    public init(app: String, since: Timestamp?, until: Timestamp?) {
        self.app = app
        self.since = WireTime.since(since)
        self.until = WireTime.until(until)
    }

    public struct Response: Codable, Sendable {
        /// nil without beats.
        public var variability: HeartRateVariability?
    }

    public func serve(in context: some RequestContext) async throws(RequestFailure) -> Response {
        let source = try context.source(app: app)
        let range = try WireTime.checked(since: since, until: until)
        let query = SampleQuery(type: .rrInterval, since: range.since, until: range.until, reader: try await context.view(of: source).reader)
        return Response(variability: try await context.onStore { store throws(HealthStoreError) in try store.heartRateVariability(query) })
    }
}
