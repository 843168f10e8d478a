import HealthModel
import Timestamps

/// Time spent in each heart-rate zone of `maxHeartRate` in [since, until), over the heart
/// rate the caller may read; empty without samples.
public struct HeartRateZonesRequest: HealthRequest {
    public static let name = "HeartRateZones"
    public static let access = RequestAccess.application
    public static let memory: RequestMemory = .perSeries

    public var app: String
    public var since: Int64
    public var until: Int64
    /// count/min, 100…250.
    public var maxHeartRate: Double

    public init(app: String, since: Timestamp?, until: Timestamp?, maxHeartRate: Double) {
        self.app = app
        self.since = WireTime.since(since)
        self.until = WireTime.until(until)
        self.maxHeartRate = maxHeartRate
    }

    public struct Response: Codable, Sendable {
        public var zones: [HeartRateZones.Zone]
    }

    public func serve(in context: some RequestContext) async throws(RequestFailure) -> Response {
        let source = try context.source(app: app)
        let range = try WireTime.checked(since: since, until: until)
        let maximum = maxHeartRate
        guard (100...250).contains(maximum) else { throw .invalidArguments("maxHeartRate must be 100…250 count/min, not \(maximum)") }
        let query = SampleQuery(type: .heartRate, since: range.since, until: range.until, reader: try await context.view(of: source).reader)
        let zones = try await context.onStore { store throws(HealthStoreError) -> [HeartRateZones.Zone] in
            try store.heartRateZones(query, maximumHeartRate: maximum)?.zones ?? []
        }
        return Response(zones: zones)
    }
}
