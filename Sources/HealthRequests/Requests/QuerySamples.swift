import HealthModel
import Timestamps

/// Samples of one type starting in [since, until), oldest first, at most `limit` (0: the most
/// one request returns): every source's for a manager or a source with read authorization,
/// else the caller's own.
public struct QuerySamples: HealthRequest {
    public static let name = "QuerySamples"
    public static let access = RequestAccess.application
    public static let memory: RequestMemory = .answer(RequestBudgets.samplesPerQuery, of: "sample")

    public var app: String
    public var type: String
    /// Microseconds since the epoch; `WireTime.noLowerBound` for none.
    public var since: Int64
    /// Microseconds since the epoch; `WireTime.noUpperBound` for none.
    public var until: Int64
    public var limit: UInt32

    public init(app: String, type: SampleType, since: Timestamp?, until: Timestamp?, limit: Int) {
        self.app = app
        self.type = type.identifier
        self.since = WireTime.since(since)
        self.until = WireTime.until(until)
        self.limit = UInt32(clamping: limit)
    }

    public struct Response: Codable, Sendable {
        public var samples: [SampleRecord]
    }

    public func serve(in context: some RequestContext) async throws(RequestFailure) -> Response {
        let source = try context.source(app: app)
        let type = try SampleType.quantityNamed(type)
        let range = try WireTime.checked(since: since, until: until)
        let limit = try RequestBudgets.queryLimit(limit)
        let view = try await context.view(of: source)
        let query = SampleQuery(type: type, since: range.since, until: range.until, limit: limit, reader: view.reader)
        let samples = try await context.onStore { store throws(HealthStoreError) in try store.samples(query) }
        return Response(samples: samples.map { view.record($0) })
    }
}
