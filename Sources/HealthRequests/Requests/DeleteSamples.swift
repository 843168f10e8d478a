import HealthModel
import Timestamps

/// Deletes samples of a type starting in [since, until), leaving tombstones that anchored
/// queries report: the caller's own (`source` empty), or any source's for a manager.
public struct DeleteSamples: HealthRequest {
    public static let name = "DeleteSamples"
    public static let access = RequestAccess.application
    public static let memory: RequestMemory = .constant

    public var app: String
    public var type: String
    /// Empty: the caller's own source.
    public var source: String
    public var since: Int64
    public var until: Int64

    public init(app: String, type: SampleType, source: String?, since: Timestamp?, until: Timestamp?) {
        self.app = app
        self.type = type.identifier
        self.source = source ?? ""
        self.since = WireTime.since(since)
        self.until = WireTime.until(until)
    }

    public struct Response: Codable, Sendable {
        public var deleted: UInt32
    }

    public func serve(in context: some RequestContext) async throws(RequestFailure) -> Response {
        let own = try context.source(app: app)
        let type = try SampleType.quantityNamed(type)
        let range = try WireTime.checked(since: since, until: until)
        let source = source.isEmpty ? own : source
        if source != own {
            try await context.requireManager(for: "deleting another source's samples")
        }
        let deleted = try await context.onStore { store throws(HealthStoreError) in
            try store.deleteSamples(of: type, source: source, device: nil, since: range.since, until: range.until)
        }
        if deleted > 0 { context.log(.notice, "deleted \(deleted) \(type.identifier) samples", ["source": source]) }
        return Response(deleted: UInt32(clamping: deleted))
    }
}
