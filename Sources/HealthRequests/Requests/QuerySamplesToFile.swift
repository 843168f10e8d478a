import HealthModel
import Timestamps

/// Every sample of a query, without a size limit, as JSON lines written to a file the caller
/// hands over (a pipe): what exports and long reads use.
public struct QuerySamplesToFile: HealthRequest {
    public static let name = "QuerySamplesToFile"
    public static let access = RequestAccess.application
    public static let memory: RequestMemory = .streamed

    public var app: String
    public var type: String
    public var since: Int64
    public var until: Int64
    public var options: Options
    public var output: PassedFile

    /// What narrows the query beyond type and range.
    public struct Options: Codable, Sendable, Hashable {
        public var source: String?
        public var device: String?
        /// At most this many (0 or none: all).
        public var limit: UInt32?
        public var newestFirst: Bool?

        public init(source: String? = nil, device: String? = nil, limit: UInt32? = nil, newestFirst: Bool? = nil) {
            self.source = source
            self.device = device
            self.limit = limit
            self.newestFirst = newestFirst
        }
    }

    public init(app: String, type: SampleType, since: Timestamp?, until: Timestamp?, options: Options, output: PassedFile) {
        self.app = app
        self.type = type.identifier
        self.since = WireTime.since(since)
        self.until = WireTime.until(until)
        self.options = options
        self.output = output
    }

    public struct Response: Codable, Sendable {
        /// Samples written.
        public var count: UInt32
    }

    public func serve(in context: some RequestContext) async throws(RequestFailure) -> Response {
        let source = try context.source(app: app)
        let type = try SampleType.quantityNamed(type)
        let range = try WireTime.checked(since: since, until: until)
        let view = try await context.view(of: source)
        var query = SampleQuery(type: type, since: range.since, until: range.until, reader: view.reader)
        query.source = options.source
        query.device = options.device
        if let limit = options.limit, limit > 0 { query.limit = Int(limit) }
        query.newestFirst = options.newestFirst ?? false
        let count = try await context.front.writeSamples(query, view: view, to: output)
        return Response(count: UInt32(clamping: count))
    }
}
